package sim

import (
	"fmt"
	"math"
	"strings"
)

// Verdict is a variant's review verdict as the results carry it: what
// `vfslab review` finds the variant doing that its base does not (the
// finding format's kind, kernel function and detail), and what the
// measurement's own counting run adds (BUG reports, pages read back
// wrong). A pass may add findings to a verdict, never remove them: only
// a review declares a variant clean.
type Verdict struct {
	// Reviewed is true when the review ran for the variant; a verdict
	// that is not reviewed is never clean, whatever it lacks.
	Reviewed bool `json:"reviewed"`
	// Source says where the verdict came from ("vfslab review, cached
	// 2026-12-01 build go:abc...").
	Source   string    `json:"source,omitempty"`
	Findings []Finding `json:"findings"`
}

// Finding is one finding of a verdict, in the review's finding format:
// its kind (kasan-out-of-bounds, leak, data-mismatch, ...), the kernel
// function where it happens, and a detail line; Text is its canonical
// one-line form, "KIND in FUNCTION: DETAIL".
type Finding struct {
	Kind     string `json:"kind"`
	Function string `json:"function"`
	Detail   string `json:"detail"`
	Text     string `json:"text"`
}

// Finding kinds the counting run adds itself (the review's spelling).
const (
	KindBug  = "bug"
	KindData = "data-mismatch"
)

// Clean reports whether the variant was reviewed and nothing was found.
func (v *Verdict) Clean() bool { return v != nil && v.Reviewed && len(v.Findings) == 0 }

// Broken reports whether anything was found: the variant as posted
// leaks, overflows, corrupts or fails where its base does not.
func (v *Verdict) Broken() bool { return v != nil && len(v.Findings) > 0 }

// Short is the verdict as a table cell: "clean", "not reviewed", or the
// findings' kinds and functions ("leak in fscrypt_fname_encrypt, bug in
// fscrypt_fname_encrypt").
func (v *Verdict) Short() string {
	switch {
	case v.Broken():
		var parts []string
		seen := map[string]bool{}
		for _, f := range v.Findings {
			s := f.Kind
			if f.Function != "" {
				s += " in " + f.Function
			}
			if !seen[s] {
				seen[s] = true
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	case v.Clean():
		return "clean"
	}
	return "not reviewed"
}

// Add appends a finding unless one of the same kind and function is
// there.
func (v *Verdict) Add(f Finding) {
	for _, g := range v.Findings {
		if g.Kind == f.Kind && g.Function == f.Function {
			return
		}
	}
	if f.Text == "" {
		f.Text = fmt.Sprintf("%s in %s: %s", f.Kind, f.Function, f.Detail)
	}
	v.Findings = append(v.Findings, f)
}

// Merge returns a verdict with the findings of every verdict given:
// reviewed only if all are (a variant of several patches measured
// together is as broken as any of them).
func Merge(vs ...*Verdict) *Verdict {
	out := &Verdict{Reviewed: len(vs) > 0, Findings: []Finding{}}
	var src []string
	for _, v := range vs {
		if v == nil {
			out.Reviewed = false
			continue
		}
		out.Reviewed = out.Reviewed && v.Reviewed
		for _, f := range v.Findings {
			out.Add(f)
		}
		if v.Source != "" && !contains(src, v.Source) {
			src = append(src, v.Source)
		}
	}
	out.Source = strings.Join(src, "; ")
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// withCounted returns v with what m's counting run found added: its BUG
// reports and the pages it read back wrong (the read workload checks
// every page in its counting run).
func withCounted(v *Verdict, m *Measurement) *Verdict {
	out := Merge(v)
	if v == nil {
		out.Reviewed = false
	}
	out.Source = ""
	if v != nil {
		out.Source = v.Source
	}
	for _, b := range dedupe(m.Bugs) {
		out.Add(Finding{Kind: KindBug, Function: bugFunction(b), Detail: "counting run: " + b})
	}
	if bad := m.Events[EvReadCorruptPages.Name()]; bad > 0 {
		out.Add(Finding{Kind: KindData, Function: "read (counting run)", Detail: corruptText(m)})
	}
	return out
}

// bugFunction is the function a BUG report names ("BUG in F: ..."), or
// "counting run".
func bugFunction(b string) string {
	for _, pre := range []string{"BUG in ", "KASAN: slab-out-of-bounds in ", "KASAN: "} {
		if rest, ok := strings.CutPrefix(b, pre); ok {
			if f, _, ok := strings.Cut(rest, ":"); ok && !strings.Contains(f, " ") {
				return f
			}
		}
	}
	return "counting run"
}

// CorruptFraction is the share of the pages one operation reads that the
// counting run read back wrong (NaN for a workload that moves no data or
// checks none).
func (m *Measurement) CorruptFraction() float64 {
	bad, ok := m.Events[EvReadCorruptPages.Name()]
	if !ok || m.DataBytesPerOp <= 0 {
		return math.NaN()
	}
	return bad / (float64(m.DataBytesPerOp) / 4096)
}

func corruptText(m *Measurement) string {
	bad := m.Events[EvReadCorruptPages.Name()]
	if f := m.CorruptFraction(); !math.IsNaN(f) {
		return fmt.Sprintf("%s of %s pages per operation read back wrong (%.0f%%)", FormatNum(bad), FormatNum(float64(m.DataBytesPerOp)/4096), 100*f)
	}
	return fmt.Sprintf("%s pages per operation read back wrong", FormatNum(bad))
}

// kindPhrase says in words what a finding of a kind means for a user of
// the variant.
var kindPhrase = map[string]string{
	"kasan-out-of-bounds":  "overflows a heap buffer",
	"kasan-use-after-free": "uses freed memory",
	"double-free":          "frees memory twice",
	"leak":                 "leaks memory",
	"bug":                  "hits a BUG",
	"warning":              "raises a WARN",
	"dma-from-stack":       "maps stack memory for DMA",
	"data-mismatch":        "returns wrong data",
	"errno-mismatch":       "fails differently from its base",
	"refcount":             "underflows a reference count",
}

// Conclusion is the one line a reader of a row should take away: the
// variant's speed against the variant compared with, and, for a broken
// variant, what it does as posted ("bio is x1.06 faster than workqueue
// (not significant) and reads 98% of pages back wrong as posted: not a
// speed-up to take").
func Conclusion(variant, against string, st RatioStats, v *Verdict, corrupt float64) string {
	speed := ""
	switch {
	case math.IsNaN(st.Ratio):
		speed = "has no measured ratio to " + against
	case !st.Significant:
		speed = fmt.Sprintf("is x%.2f against %s, not significant (p=%.3f)", st.Ratio, against, st.P)
	case st.Ratio >= 1:
		speed = fmt.Sprintf("is x%.2f faster than %s", st.Ratio, against)
	default:
		speed = fmt.Sprintf("is x%.2f slower than %s", 1/st.Ratio, against)
	}
	if st.Significant && st.Noisy {
		speed += " (but noisy: the interval is wider than the effect)"
	}
	switch {
	case v.Broken():
		var what []string
		seen := map[string]bool{}
		for _, f := range v.Findings {
			p := kindPhrase[f.Kind]
			if p == "" {
				p = f.Kind
			}
			if f.Kind == KindData && !math.IsNaN(corrupt) && corrupt > 0 {
				p = fmt.Sprintf("reads %.0f%% of pages back wrong", 100*corrupt)
			}
			if !seen[p] {
				seen[p] = true
				what = append(what, p)
			}
		}
		return fmt.Sprintf("%s %s and %s as posted: not a speed-up to take", variant, speed, joinAnd(what))
	case v.Clean():
		return fmt.Sprintf("%s %s; the review finds nothing wrong with it", variant, speed)
	}
	return fmt.Sprintf("%s %s; not reviewed (run without --no-review for its verdict)", variant, speed)
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
