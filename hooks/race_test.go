package hooks_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// raceConfig is one run of the rename race.
type raceConfig struct {
	variant  string
	other    bool // the file has another policy (else it is unencrypted)
	openers  int
	renames  int
	maxprocs int
}

// raceResult is what the openers saw.
type raceResult struct {
	exact      int // opens during which no rename ran
	ok, eperm  int
	enoent     int
	violations []string
}

// runRenameRace moves one file back and forth between an unencrypted
// directory /u and an encrypted one /e in which it is inconsistent (the
// rename hook is skipped, as only an offline tool could put it there),
// while openers open it by whichever name they guess. A sequence counter,
// odd while a rename is in progress, brackets every open: the file's
// parent during the open was one of the directories it had between the
// two readings, and the answer must be that of one of them (0 for /u,
// EPERM for /e). When no rename overlapped the open the answer is exact.
func runRenameRace(tb testing.TB, cfg raceConfig) raceResult {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(cfg.maxprocs))
	e := newEnv(tb, cfg.variant, &memfs.Options{UnsafeSkipRenameHook: true})
	e.mkdir("/u")
	e.mkdir("/e")
	e.encrypt("/e", 1)
	if cfg.other {
		e.mkdir("/e2")
		e.encrypt("/e2", 2)
		e.create("/e2/f", "x")
		e.must(e.p.Rename(e.t, "/e2/f", "/u/f", 0))
	} else {
		e.create("/u/f", "x")
	}
	// The directory of state k: the file starts in /u and alternates.
	where := func(k uint64) string { return [2]string{"/u/f", "/e/f"}[k%2] }
	answer := map[string]error{"/u/f": nil, "/e/f": errno.EPERM}

	var seq atomic.Uint64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var res raceResult
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		t := e.k.NewTask("renamer")
		defer t.Exit()
		p := e.sys.NewProc(t, nil)
		defer p.Exit(t)
		for i := uint64(0); i < uint64(cfg.renames); i++ {
			seq.Add(1)
			if err := p.Rename(t, where(i), where(i+1), 0); err != nil {
				mu.Lock()
				res.violations = append(res.violations, fmt.Sprintf("rename %d: %v", i, err))
				mu.Unlock()
			}
			seq.Add(1)
			if i%4 == 3 {
				runtime.Gosched()
			}
		}
	}()
	for o := 0; o < cfg.openers; o++ {
		wg.Add(1)
		go func(o int) {
			defer wg.Done()
			t := e.k.NewTask(fmt.Sprintf("opener%d", o))
			defer t.Exit()
			p := e.sys.NewProc(t, nil)
			defer p.Exit(t)
			var local raceResult
			for i := 0; ; i++ {
				if i%16 == 15 {
					runtime.Gosched()
				}
				select {
				case <-done:
					mu.Lock()
					res.exact += local.exact
					res.ok += local.ok
					res.eperm += local.eperm
					res.enoent += local.enoent
					res.violations = append(res.violations, local.violations...)
					mu.Unlock()
					return
				default:
					if i >= 3*cfg.renames {
						<-done
						continue
					}
				}
				s0 := seq.Load()
				path := where(s0 / 2)
				if i%3 == 2 {
					path = where(s0/2 + 1)
				}
				fd, err := p.Open(t, path, vfs.O_RDONLY, 0)
				s1 := seq.Load()
				if err == nil {
					p.Close(t, fd)
				}
				switch err {
				case errno.ENOENT:
					local.enoent++
					continue
				case nil:
					local.ok++
				case errno.EPERM:
					local.eperm++
				default:
					local.violations = append(local.violations, fmt.Sprintf("open(%s): unexpected %v", path, err))
					continue
				}
				// States the file went through during the open.
				first, last := s0/2, (s1+1)/2
				if first == last && s0%2 == 0 {
					local.exact++
				}
				allowed := false
				for k := first; k <= last; k++ {
					if answer[where(k)] == err {
						allowed = true
					}
				}
				if !allowed {
					local.violations = append(local.violations, fmt.Sprintf(
						"open(%s) = %v with the file in %s..%s (seq %d..%d)", path, errString(err), where(first), where(last), s0, s1))
				}
			}
		}(o)
	}
	wg.Wait()
	if n := e.k.Bugs.Len(); n != 0 {
		res.violations = append(res.violations, fmt.Sprintf("BUGs: %v", e.k.Bugs.All()))
	}
	return res
}

// TestFileOpenVariantsUnderRename is the concurrency property: under every
// variant, whatever the interleaving, each open's answer matches the
// parent the file had at some instant of the open.
func TestFileOpenVariantsUnderRename(t *testing.T) {
	var total raceResult
	rapid.Check(t, func(rt *rapid.T) {
		cfg := raceConfig{
			variant:  rapid.SampledFrom(variants).Draw(rt, "variant"),
			other:    rapid.Bool().Draw(rt, "otherPolicy"),
			openers:  rapid.IntRange(1, 3).Draw(rt, "openers"),
			renames:  rapid.IntRange(20, 200).Draw(rt, "renames"),
			maxprocs: rapid.IntRange(1, 4).Draw(rt, "GOMAXPROCS"),
		}
		r := runRenameRace(t, cfg)
		if len(r.violations) != 0 {
			rt.Fatalf("%+v: %d violations, first: %s", cfg, len(r.violations), r.violations[0])
		}
		total.ok += r.ok
		total.eperm += r.eperm
		total.exact += r.exact
		total.enoent += r.enoent
	})
	t.Logf("opens: %d ok, %d EPERM, %d ENOENT, %d with no rename overlapping", total.ok, total.eperm, total.enoent, total.exact)
	if total.ok == 0 || total.eperm == 0 || total.exact == 0 {
		t.Errorf("the race did not exercise both answers: %+v", total)
	}
}
