package sim

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// The noise probe: a fixed calibration loop run before and after the
// measurements, whose spread says how much the machine itself moves a
// timing. The loop does the same arithmetic every time on data that stays
// in L1, on every P at once (GOMAXPROCS goroutines), so what varies
// between its rounds is what the machine does to the process: other
// processes taking its CPUs, frequency changes, interrupts.

// QuietCV is the largest coefficient of variation of the probe's rounds
// at which the machine counts as quiet: above it, ratios between runs
// move by more than the effects the seeds report, and every format says
// that the machine was too noisy.
const QuietCV = 0.03

// Probe sizes: rounds of the loop and iterations per round (about 2 ms a
// round on a 2020s x86 core, about 50 ms a probe).
const (
	probeRounds = 25
	probeIters  = 1 << 19
)

// Probe is one run of the noise probe.
type Probe struct {
	// Rounds is the wall time of each round, in nanoseconds (the slowest
	// goroutine's).
	Rounds []float64 `json:"rounds_ns"`
	// Median and CV summarize Rounds; Procs is the number of goroutines
	// the loop ran on (GOMAXPROCS).
	Median float64 `json:"median_ns"`
	CV     float64 `json:"cv"`
	Procs  int     `json:"procs"`
}

// Quiet reports whether the probe's spread is within QuietCV.
func (p *Probe) Quiet() bool { return p != nil && p.CV <= QuietCV }

// String is the probe in one line: "probe CV 1.2% (25 rounds of 2.10 ms on 2 CPUs)".
func (p *Probe) String() string {
	if p == nil {
		return "no probe"
	}
	return fmt.Sprintf("probe CV %.1f%% (%d rounds of %.2f ms on %d CPUs)", 100*p.CV, len(p.Rounds), p.Median/1e6, p.Procs)
}

// probeLoop is the calibration loop: probeIters steps of a xorshift-
// multiply generator over a 1 KiB table.
func probeLoop(seed uint64) uint64 {
	var tab [128]uint64
	x := seed | 1
	for i := 0; i < probeIters; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		tab[x&127] += x * 0x9e3779b97f4a7c15
	}
	var s uint64
	for _, v := range tab {
		s ^= v
	}
	return s
}

// RunProbe runs the noise probe once.
func RunProbe() *Probe {
	procs := runtime.GOMAXPROCS(0)
	p := &Probe{Procs: procs}
	sums := make([]uint64, procs)
	probeLoop(1) // warm the code path
	for r := 0; r < probeRounds; r++ {
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for i := 0; i < procs; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				sums[i] ^= probeLoop(uint64(r*procs + i))
			}()
		}
		t0 := time.Now()
		close(gate)
		wg.Wait()
		p.Rounds = append(p.Rounds, float64(time.Since(t0).Nanoseconds()))
	}
	runtime.KeepAlive(sums) // the loop's results stay live: it is not optimised away
	p.Median, p.CV = median(p.Rounds), CV(p.Rounds)
	return p
}
