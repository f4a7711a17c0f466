package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review"
	"github.com/vfslab/vfslab/sim"
)

// Review verdicts for report and ab rows: every variant's verdict from
// `vfslab review`'s default run (review.Run with its default seed and
// steps; the performance part, which report and ab measure themselves,
// left out: it finds nothing), cached per patch under the user's cache
// directory, keyed by the binary's build ID, so that a build reviews each
// patch once. The cache records how long the review took, which the
// outputs state as what a cold cache adds.

// reviewSeed is vfslab review's default --seed.
const reviewSeed = 1

// verdictCacheEntry is one cached review of one patch.
type verdictCacheEntry struct {
	BuildID string         `json:"build_id"`
	Patch   string         `json:"patch"`
	Seed    uint64         `json:"seed"`
	Steps   int            `json:"steps"`
	Took    float64        `json:"took_s"`
	When    time.Time      `json:"when"`
	Result  *review.Result `json:"result"`
}

// verdicts is what the report or ab run knows of the review.
type verdicts struct {
	// byPatch holds every reviewed patch's verdicts by variant.
	byPatch map[string]map[string]*sim.Verdict
	// cold is how long the reviews took when they ran (what a cold
	// cache adds), ran how long this invocation spent reviewing.
	cold, ran time.Duration
	dir       string
	skipped   bool // --no-review
}

// verdictCacheDir is where the reviews are cached: $XDG_CACHE_HOME or
// the platform's user cache directory, under vfslab/review/BUILD.
func verdictCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(sim.BuildID()))
	return filepath.Join(base, "vfslab", "review", hex.EncodeToString(h[:8])), nil
}

// loadVerdicts returns the review verdicts of every variant of the
// patches named, from the cache or, for those not cached for this build,
// by running the review now (progress lines to progress).
func loadVerdicts(ctx context.Context, ids []string, progress io.Writer) (*verdicts, error) {
	vs := &verdicts{byPatch: map[string]map[string]*sim.Verdict{}}
	dir, err := verdictCacheDir()
	if err == nil {
		vs.dir = dir
	}
	for _, id := range ids {
		if _, done := vs.byPatch[id]; done {
			continue
		}
		e := readVerdictCache(dir, id)
		if e == nil {
			if progress != nil {
				fmt.Fprintf(progress, "vfslab: reviewing %s for the verdict column (vfslab review's default run; cached for this build in %s)\n", id, dir)
			}
			t0 := time.Now()
			res, err := runReview(ctx, id)
			if err != nil {
				return nil, fmt.Errorf("review of %s for the verdicts: %w", id, err)
			}
			took := time.Since(t0)
			vs.ran += took
			e = &verdictCacheEntry{BuildID: sim.BuildID(), Patch: id, Seed: reviewSeed, Steps: review.DefaultSteps,
				Took: took.Seconds(), When: time.Now().UTC(), Result: res}
			writeVerdictCache(dir, e)
		}
		vs.cold += time.Duration(e.Took * float64(time.Second))
		vs.byPatch[id] = verdictsOf(id, e)
	}
	return vs, nil
}

// runReview runs vfslab review's default run on patch id (its
// performance part left out). It runs in a child process of this binary
// when it can, so that the review's heap (hundreds of MB of machines and
// their garbage) is not the one the timed runs then measure in, and its
// peak memory is not added to the report's.
func runReview(ctx context.Context, id string) (*review.Result, error) {
	if exe, err := os.Executable(); err == nil && !testing.Testing() {
		cmd := exec.CommandContext(ctx, exe, "review", "--patches", id, "--seed", strconv.Itoa(reviewSeed), "--no-perf", "--json", "--quiet")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
		}
		var res review.Result
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("reading vfslab review --json: %w", err)
		}
		return &res, nil
	}
	return review.Run(ctx, review.Options{Patches: []string{id}, Seed: reviewSeed, NoPerf: true})
}

// verdictsOf turns a cached review into sim verdicts by variant; the
// patch's base is the review's reference, clean by construction.
func verdictsOf(id string, e *verdictCacheEntry) map[string]*sim.Verdict {
	src := fmt.Sprintf("vfslab review (seed %d, %d steps a filesystem), %s, build %s", e.Seed, e.Steps, e.When.Format("2006-01-02 15:04 UTC"), shortID(e.BuildID))
	out := map[string]*sim.Verdict{}
	if p, err := patch.Find(id); err == nil {
		out[p.Variants[0].Name] = &sim.Verdict{Reviewed: true, Source: src + "; the base is the review's reference", Findings: []sim.Finding{}}
	}
	for _, vv := range e.Result.Variants {
		if vv.Patch != id {
			continue
		}
		v := &sim.Verdict{Reviewed: true, Source: src, Findings: []sim.Finding{}}
		for _, f := range vv.Findings {
			v.Add(sim.Finding{Kind: f.Kind, Function: f.Function, Detail: f.Detail, Text: f.String()})
		}
		out[vv.Variant] = v
	}
	return out
}

func shortID(id string) string {
	if len(id) > 16 {
		return id[:16] + "…"
	}
	return id
}

func cachePath(dir, id string) string { return filepath.Join(dir, id+".json") }

// readVerdictCache returns the cached review of patch id for this build,
// nil when there is none (or it is unreadable, or of another build or
// seed).
func readVerdictCache(dir, id string) *verdictCacheEntry {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(cachePath(dir, id))
	if err != nil {
		return nil
	}
	var e verdictCacheEntry
	if json.Unmarshal(b, &e) != nil || e.BuildID != sim.BuildID() || e.Patch != id || e.Seed != reviewSeed ||
		e.Steps != review.DefaultSteps || e.Result == nil {
		return nil
	}
	return &e
}

// writeVerdictCache stores e, atomically (a temporary file renamed);
// a cache that cannot be written only costs the next run a review.
func writeVerdictCache(dir string, e *verdictCacheEntry) {
	if dir == "" || os.MkdirAll(dir, 0o755) != nil {
		return
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, e.Patch+".*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), cachePath(dir, e.Patch)) != nil {
		os.Remove(tmp.Name())
	}
}

// forVariant returns the verdict of a row's variant: variant of patch
// id, or, for a headline over several patches, the "+"-joined variants of
// its patches (merged: as broken as any of them).
func (vs *verdicts) forVariant(h *sim.Headline, variant string) *sim.Verdict {
	if vs == nil || vs.skipped {
		return nil
	}
	ps := h.Patches()
	parts := strings.Split(variant, "+")
	if len(parts) != len(ps) {
		parts = []string{variant}
		ps = ps[:1]
	}
	var each []*sim.Verdict
	for i, p := range ps {
		each = append(each, vs.byPatch[p.ID][parts[i]])
	}
	return sim.Merge(each...)
}

// forReport sets rep's verdicts for every variant of patch id.
func (vs *verdicts) forReport(rep *sim.Report, id string) {
	if vs == nil || vs.skipped || rep == nil {
		return
	}
	rep.Verdicts = map[string]*sim.Verdict{}
	for v, vd := range vs.byPatch[id] {
		rep.Verdicts[v] = vd
	}
	rep.Review = vs.summary()
}

// summary is the line the outputs carry about the verdicts.
func (vs *verdicts) summary() string {
	if vs == nil || vs.skipped {
		return "verdicts: not reviewed (--no-review): no row is declared clean"
	}
	s := fmt.Sprintf("verdicts: vfslab review's default run (seed %d, %d steps a filesystem), cached for this build in %s; a cold cache adds %s",
		reviewSeed, review.DefaultSteps, vs.dir, vs.cold.Round(time.Second))
	if vs.ran > 0 {
		s += fmt.Sprintf(" (this run reviewed for %s)", vs.ran.Round(time.Second))
	}
	return s
}
