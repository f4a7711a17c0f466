package sim

import (
	"encoding/csv"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// CSVHeader is the fixed part of the header WriteCSV writes; one column
// per event (its count per operation, from the counting run) follows, in
// name order.
var CSVHeader = []string{"workload", "patch", "slub_debug", "threads", "variant", "ops_per_worker", "runs",
	"ns_per_op", "ns_per_op_lo", "ns_per_op_hi", "ops_per_sec", "ops_per_sec_lo", "ops_per_sec_hi",
	"ratio_to_base", "p", "significant", "mb_per_sec", "allocs_per_op", "bytes_per_op",
	"kmalloc_per_op", "kmalloc_bytes_per_op", "ratio_lo", "ratio_hi", "cv", "noisy", "broken", "verdict",
	"cpu", "cores", "go_version", "commit", "load_before", "load_after", "noise_cv", "machine_quiet"}

// WriteCSV writes one row per variant and thread count (medians, 95%
// confidence bounds, the ratio of ops/s to the base with its p-value, Go
// allocations, the ratio's bootstrap interval, the between-run CV, the
// noise and review marks and verdict, the machine's metadata, then events
// per operation), after a header row. A value that is missing or not
// finite (a bound with too few runs) is an empty field, as JSON's null.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	events := r.eventNames()
	if err := cw.Write(append(append([]string(nil), CSVHeader...), events...)); err != nil {
		return err
	}
	if err := r.writeCSVRows(cw, events); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSVRows writes the rows of WriteCSV without the header, with the
// event columns given (so that several reports share one header).
func (r *Report) WriteCSVRows(w io.Writer, events []string) error {
	cw := csv.NewWriter(w)
	if err := r.writeCSVRows(cw, events); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func (r *Report) writeCSVRows(cw *csv.Writer, events []string) error {
	f := CSVNum
	mach := r.Machine
	if mach == nil {
		mach = &Machine{}
	}
	machCols := []string{mach.CPU, strconv.Itoa(mach.Cores), mach.GoVersion, mach.Commit, LoadCSV(mach.LoadBefore), LoadCSV(mach.LoadAfter), "", ""}
	if mach.Probed() {
		machCols[6], machCols[7] = f(mach.NoiseCV()), strconv.FormatBool(mach.Quiet())
	}
	for _, g := range r.Groups {
		base := g.Measurements[0]
		for _, m := range g.Measurements {
			st := m.Stats(base)
			ratio, p, sig := "", "", ""
			if m != base {
				ratio, p, sig = f(st.OpsPerSec.Ratio), f(st.OpsPerSec.P), strconv.FormatBool(st.OpsPerSec.Significant)
			}
			mbs := ""
			if len(m.MBPerSec) > 0 {
				mbs = f(st.MBPerSec.Median)
			}
			row := []string{r.Workload, r.Patch, strconv.FormatBool(r.SlubDebug), strconv.Itoa(g.Threads), m.Variant,
				strconv.Itoa(m.Ops), strconv.Itoa(len(m.NsPerOp)),
				f(st.NsPerOp.Median), f(st.NsPerOp.Lo), f(st.NsPerOp.Hi),
				f(st.OpsPerSec.Median), f(st.OpsPerSec.Lo), f(st.OpsPerSec.Hi),
				ratio, p, sig, mbs, f(st.AllocsPerOp.Median), f(st.BytesPerOp.Median),
				f(m.Kmallocs), f(m.KmallocBytes)}
			v := withCounted(r.Verdicts[m.Variant], m)
			lo, hi, noisy := "", "", ""
			if m != base {
				rs := CompareRuns(base.OpsPerSec, m.OpsPerSec)
				lo, hi, noisy = f(rs.Lo), f(rs.Hi), strconv.FormatBool(rs.Noisy)
			}
			row = append(row, lo, hi, f(CV(m.OpsPerSec)), noisy, strconv.FormatBool(v.Broken()), v.Short())
			row = append(row, machCols...)
			ev := m.EventsPerOp()
			for _, e := range events {
				if ev == nil {
					row = append(row, "")
				} else {
					row = append(row, f(ev[e]))
				}
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	return nil
}

// CSVNum formats a number for CSV: empty when missing or not finite, as
// the JSON formats write null.
func CSVNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// LoadCSV renders a load average as "1.00 2.00 3.00" (empty when unknown).
func LoadCSV(l []float64) string {
	var parts []string
	for _, v := range l {
		parts = append(parts, strconv.FormatFloat(v, 'f', 2, 64))
	}
	return strings.Join(parts, " ")
}

// EventNames returns the names of the events any variant of r counted,
// sorted ("kmalloc" always among them).
func (r *Report) EventNames() []string { return r.eventNames() }

func (r *Report) eventNames() []string {
	seen := map[string]bool{"kmalloc": true}
	for _, g := range r.Groups {
		for _, m := range g.Measurements {
			for n := range m.Events {
				seen[n] = true
			}
		}
	}
	var out []string
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
