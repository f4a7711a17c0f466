package sim

import (
	"math"
	"strings"
	"testing"
)

func TestMinP(t *testing.T) {
	for _, c := range []struct {
		n, m int
		p    float64
	}{{3, 3, 0.1}, {4, 4, 2.0 / 70}, {5, 5, 2.0 / 252}, {1, 1, 1}, {2, 3, 0.2}} {
		if got := MinP(c.n, c.m); math.Abs(got-c.p) > 1e-12 {
			t.Errorf("MinP(%d,%d) = %v, want %v", c.n, c.m, got, c.p)
		}
	}
	if MinCount() != 4 {
		t.Fatalf("MinCount = %d", MinCount())
	}
	if w := CountWarning(3, 3); !strings.Contains(w, "0.100") || !strings.Contains(w, "--count 4") {
		t.Fatalf("CountWarning(3,3) = %q", w)
	}
	if w := CountWarning(5, 5); w != "" {
		t.Fatalf("CountWarning(5,5) = %q", w)
	}
}

func TestCompareRuns(t *testing.T) {
	base := []float64{100, 101, 99, 100, 102, 98, 100, 101}
	fast := []float64{150, 151, 149, 150, 152, 148, 150, 151}
	st := CompareRuns(base, fast)
	if !st.Significant || st.Noisy || math.Abs(st.Ratio-1.5) > 0.01 || !(st.Lo <= st.Ratio && st.Ratio <= st.Hi) || st.Lo < 1.45 || st.Hi > 1.55 {
		t.Fatalf("clear effect: %+v", st)
	}
	// The same effect buried in spread: the interval reaches across x1.
	noisy := []float64{50, 300, 90, 200, 150, 120, 400, 60}
	st = CompareRuns(base, noisy)
	if !st.Noisy || st.Lo > 1 {
		t.Fatalf("noisy effect: %+v", st)
	}
	if st := CompareRuns(base, base); st.Significant || st.Ratio != 1 {
		t.Fatalf("no effect: %+v", st)
	}
	if st := CompareRuns([]float64{1}, []float64{2}); !math.IsNaN(st.Lo) || !st.Noisy || st.MinP != 1 {
		t.Fatalf("one run a side: %+v", st)
	}
	if g := GeoMean([]float64{2, 8, math.Inf(1), 0}); math.Abs(g-4) > 1e-12 {
		t.Fatalf("GeoMean = %v", g)
	}
}

// TestProbe: the probe's rounds are timed and summarized; its CV decides
// quiet against QuietCV (no assertion on the machine's own noise).
func TestProbe(t *testing.T) {
	p := RunProbe()
	if len(p.Rounds) != probeRounds || p.Median <= 0 || p.CV < 0 || p.Procs < 1 {
		t.Fatalf("probe %+v", p)
	}
	if p.Quiet() != (p.CV <= QuietCV) || !strings.Contains(p.String(), "probe CV") {
		t.Fatalf("probe %v quiet=%v", p, p.Quiet())
	}
	m := &Machine{ProbeBefore: &Probe{CV: 0.01}, ProbeAfter: &Probe{CV: 0.08}, LoadBefore: []float64{1, 2, 3}}
	if m.Quiet() || m.NoiseCV() != 0.08 || !strings.Contains(m.NoiseWarning(), "8.0%") {
		t.Fatalf("noisy machine: %v %q", m.NoiseCV(), m.NoiseWarning())
	}
	m.ProbeAfter.CV = 0.02
	if !m.Quiet() || m.NoiseWarning() != "" {
		t.Fatalf("quiet machine: %q", m.NoiseWarning())
	}
}

func TestMachine(t *testing.T) {
	m := NewMachine(false)
	if m.CPU == "" || m.Cores < 1 || m.GoVersion == "" || m.Commit == "" || m.BuildID == "" || m.Probed() {
		t.Fatalf("machine %+v", m)
	}
	m.Finish()
	if m.ProbeAfter != nil || !strings.Contains(m.String(), m.GoVersion) {
		t.Fatalf("machine %v", m)
	}
}
