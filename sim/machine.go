package sim

import (
	"bufio"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// Machine says where and with what build figures were measured: the CPU,
// the Go toolchain, the commit, the load average and the noise probe
// before and after the runs. Every output format carries it, so that two
// files compared later say whether they came from comparable machines.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"` // physical cores ("cpu cores" of /proc/cpuinfo; NumCPU when unknown)
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GoVersion  string `json:"go_version"`
	// Commit is the vcs revision the binary was built from ("-dirty"
	// appended for a modified tree); "unknown" when the build recorded
	// none (go build -buildvcs=false, go run outside a checkout).
	Commit string `json:"commit"`
	// BuildID identifies the binary: Go's build ID, or a hash of the
	// executable when it has none.
	BuildID string `json:"build_id"`
	// LoadBefore and LoadAfter are /proc/loadavg's 1, 5 and 15 minute
	// load averages when the runs started and ended (nil when unknown).
	LoadBefore []float64 `json:"load_before"`
	LoadAfter  []float64 `json:"load_after"`
	// ProbeBefore and ProbeAfter are the noise probe's runs.
	ProbeBefore *Probe `json:"probe_before,omitempty"`
	ProbeAfter  *Probe `json:"probe_after,omitempty"`
}

// NewMachine reads the machine's metadata and runs the noise probe, as
// measurements start; Finish records the end.
func NewMachine(probe bool) *Machine {
	m := &Machine{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GoVersion: runtime.Version(), Commit: commit(), BuildID: BuildID()}
	m.CPU, m.Cores = cpuInfo()
	if m.Cores == 0 {
		m.Cores = m.NumCPU
	}
	m.LoadBefore = loadAvg()
	if probe {
		m.ProbeBefore = RunProbe()
	}
	return m
}

// Finish records the load average and, when the start was probed, runs
// the probe again.
func (m *Machine) Finish() {
	if m == nil {
		return
	}
	if m.ProbeBefore != nil {
		m.ProbeAfter = RunProbe()
	}
	m.LoadAfter = loadAvg()
}

// NoiseCV is the larger of the two probes' coefficients of variation (0
// without a probe).
func (m *Machine) NoiseCV() float64 {
	if m == nil {
		return 0
	}
	cv := 0.0
	for _, p := range []*Probe{m.ProbeBefore, m.ProbeAfter} {
		if p != nil {
			cv = max(cv, p.CV)
		}
	}
	return cv
}

// Probed reports whether the noise probe ran.
func (m *Machine) Probed() bool { return m != nil && m.ProbeBefore != nil }

// Quiet reports whether both probes found the machine quiet (QuietCV).
func (m *Machine) Quiet() bool { return m.Probed() && m.NoiseCV() <= QuietCV }

// NoiseWarning is the line every format prints when the machine was too
// noisy for its figures, "" when it was quiet or not probed.
func (m *Machine) NoiseWarning() string {
	if !m.Probed() || m.Quiet() {
		return ""
	}
	return fmt.Sprintf("WARNING: the machine was too noisy: the noise probe's CV is %.1f%% (quiet: <= %.0f%%; load average %s before, %s after); ratios move between invocations by more than their intervals say",
		100*m.NoiseCV(), 100*QuietCV, loadText(m.LoadBefore), loadText(m.LoadAfter))
}

// String is the machine in one line.
func (m *Machine) String() string {
	if m == nil {
		return "machine unknown"
	}
	s := fmt.Sprintf("%s, %d cores (%d CPUs, GOMAXPROCS %d), %s %s/%s, commit %s, load %s -> %s",
		m.CPU, m.Cores, m.NumCPU, m.GOMAXPROCS, m.GoVersion, m.GOOS, m.GOARCH, m.Commit, loadText(m.LoadBefore), loadText(m.LoadAfter))
	if m.Probed() {
		s += fmt.Sprintf(", noise probe CV %.1f%% before, %.1f%% after", 100*m.ProbeBefore.CV, 100*probeCV(m.ProbeAfter))
		if m.Quiet() {
			s += " (quiet)"
		} else {
			s += fmt.Sprintf(" (noisy: > %.0f%%)", 100*QuietCV)
		}
	}
	return s
}

func probeCV(p *Probe) float64 {
	if p == nil {
		return 0
	}
	return p.CV
}

func loadText(l []float64) string {
	if len(l) < 3 {
		return "?"
	}
	return fmt.Sprintf("%.2f/%.2f/%.2f", l[0], l[1], l[2])
}

// loadAvg reads /proc/loadavg (nil elsewhere).
func loadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	var out []float64
	for _, s := range f[:3] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// cpuInfo reads the CPU model and the physical cores from /proc/cpuinfo
// (the model from runtime.GOARCH elsewhere).
func cpuInfo() (model string, cores int) {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH, 0
	}
	defer f.Close()
	sockets := map[string]int{}
	phys := "0"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			if model == "" {
				model = v
			}
		case "physical id":
			phys = v
		case "cpu cores":
			if n, err := strconv.Atoi(v); err == nil {
				sockets[phys] = n
			}
		}
	}
	for _, n := range sockets {
		cores += n
	}
	if model == "" {
		model = runtime.GOARCH
	}
	return model, cores
}

// commit is the build's vcs revision, or "unknown".
func commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", ""
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev == "" {
		return "unknown"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev + dirty
}

var buildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	if id := goBuildID(exe); id != "" {
		return id
	}
	f, err := os.Open(exe)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:32]
})

// BuildID identifies the running binary: the Go build ID from its ELF
// note (what `go tool buildid` prints: it changes with any input of the
// build), else a hash of the executable's bytes.
func BuildID() string { return buildID() }

// goBuildID reads the .note.go.buildid note of an ELF executable.
func goBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	bo := f.ByteOrder
	namesz, descsz := bo.Uint32(b[0:]), bo.Uint32(b[4:])
	off := 12 + (namesz+3)&^3
	if uint64(off)+uint64(descsz) > uint64(len(b)) {
		return ""
	}
	return string(b[off : off+descsz])
}
