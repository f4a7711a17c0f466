package sim

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/rcu"
	"github.com/vfslab/vfslab/vfs"
)

var open1Variants = hooks.FileOpenPatch.VariantNames()

// TestLockrefRMWPerOpen pins seed 004's figure: with one task (so that no
// cmpxchg is retried) base performs exactly 2 atomic read-modify-writes on
// the shared directory's lockref per open (dget_parent + dput), v1 and v2
// none when the directory is not encrypted, and every variant 2 when it
// is.
func TestLockrefRMWPerOpen(t *testing.T) {
	const n = 500
	for _, v := range open1Variants {
		for _, enc := range []bool{false, true} {
			cfg := Open1Config{Variant: v, Encrypted: enc, Tasks: 1, Counting: true}
			b, err := NewOpen1Bench(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r, err := b.Run(n)
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			want := uint64(2 * n)
			if v != "base" && !enc {
				want = 0
			}
			if got := r.Events.Get(dcache.EvLockrefRMWWatched); got != want {
				t.Errorf("%v: %d lockref RMWs on /tmp in %d opens, want %d", cfg, got, n, want)
			}
			if got := r.Events.Get(vfs.EvPathWalkFallback); got != 0 {
				t.Errorf("%v: %d ref-walk fallbacks", cfg, got)
			}
			if got := r.Events.Get(vfs.EvPathWalkRCU); got != n {
				t.Errorf("%v: %d RCU walks for %d opens", cfg, got, n)
			}
			t.Logf("%-24v lockref_rmw_watched/op=%.0f lockref_rmw/op=%.0f dget/op=%.0f rcu_read_lock/op=%.0f",
				cfg, r.PerOp(dcache.EvLockrefRMWWatched), r.PerOp(dcache.EvLockrefRMW), r.PerOp(dcache.EvDget), r.PerOp(rcu.EvReadLock))
		}
	}
}

// TestOpen1Concurrent runs every variant with several tasks: no errors,
// and per open at least the single-task count of shared-lockref
// operations (contention only adds retries).
func TestOpen1Concurrent(t *testing.T) {
	for _, v := range open1Variants {
		cfg := Open1Config{Variant: v, Tasks: 4, Counting: true}
		b, err := NewOpen1Bench(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Run(300)
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
		per := r.PerOp(dcache.EvLockrefRMWWatched)
		if (v == "base" && per < 2) || (v != "base" && per != 0) {
			t.Errorf("%v: %.2f lockref RMWs on /tmp per open", cfg, per)
		}
	}
}

func taskCounts() []int {
	ts := []int{1, 2, 4, 8}
	if p := runtime.GOMAXPROCS(0); p != 1 && p != 2 && p != 4 && p != 8 {
		ts = append(ts, p)
	}
	return ts
}

// BenchmarkOpen1 is will-it-scale open1_processes: ns/op is wall time per
// open+close over all tasks (so ops/s = T / (T * ns/op) ... = 1e9/ns/op),
// reported as ops/s too; the per-open event counts come from a separate,
// counting run of the same configuration.
func BenchmarkOpen1(b *testing.B) {
	for _, v := range open1Variants {
		for _, enc := range []bool{false, true} {
			for _, T := range taskCounts() {
				cfg := Open1Config{Variant: v, Encrypted: enc, Tasks: T}
				b.Run(cfg.String(), func(b *testing.B) {
					bench, err := NewOpen1Bench(cfg)
					if err != nil {
						b.Fatal(err)
					}
					defer bench.Close()
					n := max(b.N/T, 1)
					b.ReportAllocs()
					b.ResetTimer()
					r, err := bench.Run(n)
					b.StopTimer()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(r.OpsPerSec(), "ops/s")
					c := cfg
					c.Counting = true
					cb, err := NewOpen1Bench(c)
					if err != nil {
						b.Fatal(err)
					}
					cr, err := cb.Run(200)
					cb.Close()
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(cr.PerOp(dcache.EvLockrefRMWWatched), "shared-lockref-rmw/op")
					b.ReportMetric(cr.PerOp(dcache.EvDget), "dget/op")
					b.ReportMetric(cr.PerOp(rcu.EvReadLock), "rcu-sections/op")
				})
			}
		}
	}
}

// Example output of a counting run.
func ExampleNewOpen1Bench() {
	b, err := NewOpen1Bench(Open1Config{Variant: "v2", Tasks: 2, Counting: true})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	r, err := b.Run(100)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d opens, %.0f shared lockref RMWs per open\n", r.Ops, r.PerOp(dcache.EvLockrefRMWWatched))
	// Output: 200 opens, 0 shared lockref RMWs per open
}

// BenchmarkOpen1AB measures the variants in alternation: each iteration is
// one round in which every variant runs the same number of opens with T
// tasks, so that noise from the rest of the machine (other processes on
// its few cores) falls on all of them alike. It reports each variant's
// median ops/s over the rounds, the median of the per-round v2/base and
// v1/base ratios, and, for T=2, the median T=2/T=1 scaling of each
// variant. Run it with -benchtime=Nx for N rounds.
func BenchmarkOpen1AB(b *testing.B) {
	for _, enc := range []bool{false, true} {
		for _, T := range []int{1, 2} {
			name := fmt.Sprintf("parent=%s/T=%d", map[bool]string{false: "plain", true: "encrypted"}[enc], T)
			b.Run(name, func(b *testing.B) {
				const chunk = 20000
				benches := map[string]*Open1Bench{}
				singles := map[string]*Open1Bench{}
				for _, v := range open1Variants {
					for _, m := range []struct {
						into  map[string]*Open1Bench
						tasks int
					}{{benches, T}, {singles, 1}} {
						x, err := NewOpen1Bench(Open1Config{Variant: v, Encrypted: enc, Tasks: m.tasks})
						if err != nil {
							b.Fatal(err)
						}
						defer x.Close()
						m.into[v] = x
					}
				}
				ops := map[string][]float64{}
				ratios := map[string][]float64{}
				scaling := map[string][]float64{}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					round := map[string]float64{}
					for _, v := range open1Variants {
						r, err := benches[v].Run(chunk / T)
						if err != nil {
							b.Fatal(err)
						}
						round[v] = r.OpsPerSec()
						ops[v] = append(ops[v], r.OpsPerSec())
						if T > 1 {
							r1, err := singles[v].Run(chunk)
							if err != nil {
								b.Fatal(err)
							}
							scaling[v] = append(scaling[v], round[v]/r1.OpsPerSec())
						}
					}
					for _, v := range open1Variants[1:] {
						ratios[v] = append(ratios[v], round[v]/round["base"])
					}
				}
				b.StopTimer()
				for _, v := range open1Variants {
					b.ReportMetric(median(ops[v]), v+"-ops/s")
					if T > 1 {
						b.ReportMetric(median(scaling[v]), v+"-T2/T1")
					}
				}
				for _, v := range open1Variants[1:] {
					b.ReportMetric(median(ratios[v]), v+"/base")
				}
			})
		}
	}
}
