package review

import (
	"fmt"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
)

// maxShrinkRuns bounds the predicate evaluations of one shrink.
const maxShrinkRuns = 40

// findingsOf runs seq on the variant and on base (with spec at inject)
// and returns the variant's findings against base.
func findingsOf(env Env, set patch.Set, seed uint64, seq []Step, inject int, spec fault.Spec) ([]Finding, error) {
	if inject >= 0 {
		vf, _, err := injectedFindings(env, set, seed, seq, inject, spec, nil, nil)
		return vf, err
	}
	vt, err := execute(env, set, seed, seq, -1, spec)
	if err != nil {
		return nil, err
	}
	bt, err := execute(env, patch.Set{}, seed, seq, -1, spec)
	if err != nil {
		return nil, err
	}
	vf, _ := compare(seq, vt, bt, bt.live)
	return vf, nil
}

// Shrink is delta debugging over the steps of a failing sequence (Zeller's
// ddmin, complements only): it removes chunks of steps, halving the chunk
// size when none can go, as long as fails still holds, and returns the
// smallest sequence found. keep is an index that must stay (the injected
// step; -1: none); the returned index is where it ended up. fails is
// called at most budget times.
func Shrink(seq []Step, keep int, budget int, fails func(seq []Step, keep int) bool) ([]Step, int) {
	idx := make([]int, 0, len(seq))
	for i := range seq {
		idx = append(idx, i)
	}
	build := func(ix []int) ([]Step, int) {
		out := make([]Step, 0, len(ix))
		k := -1
		for _, i := range ix {
			if i == keep {
				k = len(out)
			}
			out = append(out, seq[i])
		}
		return out, k
	}
	runs := 0
	n := 2
	for len(idx) >= 2 && runs < budget {
		chunk := (len(idx) + n - 1) / n
		reduced := false
		for start := 0; start < len(idx) && runs < budget; start += chunk {
			end := min(start+chunk, len(idx))
			var comp []int
			removesKeep := false
			for j, i := range idx {
				if j >= start && j < end {
					if i == keep {
						removesKeep = true
					}
					continue
				}
				comp = append(comp, i)
			}
			if removesKeep || len(comp) == 0 {
				continue
			}
			runs++
			s, k := build(comp)
			if fails(s, k) {
				idx = comp
				n = max(n-1, 2)
				reduced = true
				break
			}
		}
		if !reduced {
			if n >= len(idx) {
				break
			}
			n = min(2*n, len(idx))
		}
	}
	return build(idx)
}

// shrink minimises the sequence of finding f (kind and function kept)
// and returns f with the minimal sequence's detail and its reproducer.
func (rv *reviewer) shrink(env Env, set patch.Set, seed uint64, seq []Step, inject int, spec fault.Spec, f Finding) Finding {
	// Steps after the finding's cannot matter, unless it is found at
	// teardown or under injection (where the teardown judges leaks).
	if f.step >= 0 && f.step < len(seq)-1 && f.Kind != KindLeak && f.step >= inject {
		seq = seq[:f.step+1]
	}
	last := f
	fails := func(s []Step, k int) bool {
		if rv.ctx.Err() != nil {
			return false
		}
		fs, err := findingsOf(env, set, seed, s, k, spec)
		if err != nil {
			return false
		}
		for _, g := range fs {
			if g.key() == f.key() {
				last = g
				return true
			}
		}
		return false
	}
	small, k := Shrink(seq, inject, maxShrinkRuns, fails)
	if len(small) < len(seq) {
		fails(small, k) // the minimal sequence's own detail
	}
	last.Reproducer = Script(env, set, seed, small, k, spec)
	last.FirstStep = last.step + 1
	last.Occurrences = 1
	if last.Stack == nil {
		last.Stack = []string{}
	}
	return last
}

// baseFindings runs seq on base (with spec at inject) and returns what
// base does itself: its detectors' reports, and under injection what
// judgeInjected finds against base's uninjected run.
func baseFindings(env Env, seed uint64, seq []Step, inject int, spec fault.Spec) ([]Finding, error) {
	if inject < 0 {
		bt, err := execute(env, patch.Set{}, seed, seq, -1, spec)
		if err != nil {
			return nil, err
		}
		return bt.findings, nil
	}
	ref, err := execute(env, patch.Set{}, seed, seq, -1, fault.Spec{})
	if err != nil {
		return nil, err
	}
	bt, err := execute(env, patch.Set{}, seed, seq, inject, spec)
	if err != nil || !bt.hit {
		return nil, err
	}
	return judgeInjected(env, seq, inject, bt, ref), nil
}

// shrinkKernel minimises the sequence of a kernel finding (base's own)
// and returns it with its reproducer.
func (rv *reviewer) shrinkKernel(r kernelRecord) Finding {
	last := r.f
	fails := func(s []Step, k int) bool {
		if rv.ctx.Err() != nil {
			return false
		}
		fs, err := baseFindings(r.env, r.seed, s, k, r.spec)
		if err != nil {
			return false
		}
		for _, g := range fs {
			if g.key() == r.f.key() {
				last = g
				return true
			}
		}
		return false
	}
	small, k := Shrink(r.seq, r.inject, maxShrinkRuns, fails)
	if len(small) < len(r.seq) {
		fails(small, k)
	}
	if k >= 0 {
		last.Detail += fmt.Sprintf(" [under fault injection: %s at step %d]", r.spec, k+1)
	}
	last.Reproducer = Script(r.env, patch.Set{}, r.seed, small, k, r.spec)
	last.FirstStep = last.step + 1
	last.Occurrences = 1
	if last.Stack == nil {
		last.Stack = []string{}
	}
	return last
}
