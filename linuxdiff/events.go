package linuxdiff

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Event counts: vfslab's A/B verdicts rest on exact counts per operation,
// so they are held against the kernel's own. In the guest, tracefs counts
// kprobes on the functions vfslab counts (each taken from
// available_filter_functions; a function the kernel inlines has no probe
// and no row) and the kmem:kmalloc, kmem:kfree and
// workqueue:workqueue_queue_work tracepoints, filtered on the workload's
// shell (set_event_pid with event-fork); in vfslab, `events`. Each
// workload's operation runs in the shell itself (a redirection, no
// exec), N and then 2N times from the same state, and a count per
// operation is the difference over N, so that what the loop's start and
// end cost falls out. Timer-driven work (jbd2 commits, writeback, RCU
// callbacks) runs on other tasks and is not counted on either side.

// EventWorkload is one small workload, after the seeds'.
type EventWorkload struct {
	Name string
	Fs   string
	// Setup makes the state both runs start from (it runs once per run).
	Setup string
	// Op is the operation, with $i the operation's number (distinct
	// files for cold operations).
	Op  string
	Doc string
}

// EventWorkloads are the seeds' workloads, small.
var EventWorkloads = []EventWorkload{
	{Name: "create", Fs: "f2fs", Doc: "creates in an encrypted, casefolded f2fs directory (seeds 000 and 001)",
		Setup: `mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null; _set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER; chattr +F $SCRATCH_MNT/d`,
		Op: `: > $SCRATCH_MNT/d/File$i`},
	{Name: "v1-open-cold", Fs: "ext4", Doc: "opens of v1-encrypted files after sync and drop_caches (seed 002)",
		Setup: `_scratch_mkfs_encrypted >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/v1; _set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_add_session_encryption_key $TEST_KEY_DESCRIPTOR "$TEST_RAW_KEY"; for ((j = 0; j < 64; j++)); do echo x > $SCRATCH_MNT/v1/f$j; done`,
		Op: `read -r x < $SCRATCH_MNT/v1/f$i`},
	{Name: "open-close", Fs: "ext4", Doc: "opens and closes of a file in a plain directory on an ext4 scratch mount (seed 004)",
		Setup: `_scratch_mkfs >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/plain; echo data > $SCRATCH_MNT/plain/file; read -r x < $SCRATCH_MNT/plain/file`,
		Op:    `read -r x < $SCRATCH_MNT/plain/file`},
	{Name: "cold-read", Fs: "ext4", Doc: "cold reads of 16 KiB encrypted files on ext4 by xfs_io (seed 003; on the scratch device, not over loop; on Linux each operation also counts the exec of xfs_io)",
		Setup: `_scratch_mkfs_encrypted >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/enc; _add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $SCRATCH_MNT/enc $TEST_KEY_IDENTIFIER; for ((j = 0; j < 64; j++)); do xfs_io -f -c "pwrite 0 16k" $SCRATCH_MNT/enc/f$j >/dev/null; done`,
		Op: `xfs_io -r -c "pread 0 16k" $SCRATCH_MNT/enc/f$i >/dev/null`},
}

// KernelEvent is one row's event: the kernel's probe or tracepoint and
// the vfslab events whose sum stands for it.
type KernelEvent struct {
	Kernel string   // function (kprobe) or tracepoint name
	Vfslab []string // vfslab event names summed
	Note   string   // what the mapping leaves out
}

// KernelEvents are the compared events.
var KernelEvents = []KernelEvent{
	{Kernel: "kmalloc", Vfslab: []string{"kmalloc"}},
	{Kernel: "kfree", Vfslab: []string{"kfree"}},
	{Kernel: "workqueue_queue_work", Vfslab: []string{"queue_work"}},
	{Kernel: "fscrypt_fname_encrypt", Vfslab: []string{"fscrypt_fname_encrypt"}},
	{Kernel: "fscrypt_fname_disk_to_usr", Vfslab: []string{"fscrypt_fname_decrypt", "fscrypt_nokey_encode"}},
	{Kernel: "generic_ci_match", Vfslab: []string{"f2fs_names_compared", "ext4_names_compared"}, Note: "vfslab counts every compared name, casefolded directories or not"},
	{Kernel: "dget_parent", Vfslab: []string{"fscrypt_file_open_dget_parent"}, Note: "vfslab counts fscrypt_file_open's only"},
	{Kernel: "dput", Vfslab: []string{"dput"}},
	{Kernel: "fscrypt_file_open", Vfslab: []string{"fscrypt_file_open_dget_parent", "fscrypt_file_open_fast", "fscrypt_file_open_eperm"}, Note: "vfslab counts the calls past IS_ENCRYPTED(inode)"},
	{Kernel: "crypto_alloc_skcipher", Vfslab: []string{"crypto_tfm_alloc"}},
	{Kernel: "fscrypt_decrypt_bio", Vfslab: []string{"fscrypt_decrypt_bio"}},
}

// eventRuns are the two loop lengths; a count per operation is
// (count(2N) - count(N)) / N.
const eventRunN = 8

// EventScript is one workload's script for one side: the setup, then
// for each of N and 2N operations a line "EVENTS WORKLOAD N NAME COUNT"
// per event. On Linux the counts come from tracefs; in vfslab from
// `events` (so the script must run in vfslab sh without --as-linux).
func (w EventWorkload) EventScript(linux bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# vfslab sh --fs %s\n# Event counts: %s.\n", w.Fs, w.Doc)
	if linux {
		b.WriteString(`T=/sys/kernel/tracing
echo 0 > $T/tracing_on; echo 16384 > $T/buffer_size_kb; echo > $T/kprobe_events
for f in ` + kprobeList() + `; do
	grep -qx "$f" $T/available_filter_functions && echo "p:vfslab/$f $f" >> $T/kprobe_events
done
echo 1 > $T/options/event-fork
`)
	}
	for _, n := range []int{eventRunN, 2 * eventRunN} {
		fmt.Fprintf(&b, "%s\nsync; echo 3 > /proc/sys/vm/drop_caches\n", w.Setup)
		if linux {
			b.WriteString(`echo > $T/trace
for e in vfslab kmem/kmalloc kmem/kfree workqueue/workqueue_queue_work; do echo 1 > $T/events/$e/enable; done
(
	echo $BASHPID > $T/set_event_pid
	echo 1 > $T/tracing_on
`)
			fmt.Fprintf(&b, "\tfor ((i = 0; i < %d; i++)); do %s; done\n", n, w.Op)
			b.WriteString(`	echo 0 > $T/tracing_on
)
echo > $T/set_event_pid
for e in vfslab kmem/kmalloc kmem/kfree workqueue/workqueue_queue_work; do echo 0 > $T/events/$e/enable; done
`)
			fmt.Fprintf(&b, "for e in %s; do echo \"EVENTS %s %d $e $(grep -c \" $e: \" $T/trace)\"; done\n", kernelList(), w.Name, n)
		} else {
			b.WriteString("events reset\n")
			fmt.Fprintf(&b, "for ((i = 0; i < %d; i++)); do %s; done\n", n, w.Op)
			fmt.Fprintf(&b, "events | sed 's/^/EVENTS %s %d /'\n", w.Name, n)
		}
		b.WriteString("_scratch_unmount\n")
	}
	return b.String()
}

func kprobeList() string {
	var l []string
	for _, e := range KernelEvents {
		switch e.Kernel {
		case "kmalloc", "kfree", "workqueue_queue_work":
		default:
			l = append(l, e.Kernel)
		}
	}
	return strings.Join(l, " ")
}

func kernelList() string {
	var l []string
	for _, e := range KernelEvents {
		l = append(l, e.Kernel)
	}
	return strings.Join(l, " ")
}

// eventCounts reads the "EVENTS WORKLOAD N NAME COUNT" lines of a run.
func eventCounts(out string) map[string]map[int]map[string]int64 {
	c := map[string]map[int]map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "EVENTS" {
			continue
		}
		n, err1 := strconv.Atoi(f[2])
		v, err2 := strconv.ParseInt(f[4], 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if c[f[1]] == nil {
			c[f[1]] = map[int]map[string]int64{}
		}
		if c[f[1]][n] == nil {
			c[f[1]][n] = map[string]int64{}
		}
		c[f[1]][n][f[3]] = v
	}
	return c
}

// EventRow is one row of the table: an event on a workload, per
// operation on each side (NaN-free: Missing when the side had no count).
type EventRow struct {
	Event, Workload string
	Linux, Vfslab   float64
	LinuxMissing    bool // the kernel has no probe for it (inlined)
	Note            string
}

// EventTable compares the two sides' outputs (every workload's lines).
func EventTable(linuxOut, vfslabOut string) []EventRow {
	lc, vc := eventCounts(linuxOut), eventCounts(vfslabOut)
	perOp := func(m map[int]map[string]int64, names ...string) (float64, bool) {
		a, b := m[eventRunN], m[2*eventRunN]
		if a == nil || b == nil {
			return 0, false
		}
		var d int64
		ok := false
		for _, n := range names {
			va, oka := a[n]
			vb, okb := b[n]
			if oka || okb {
				ok = true
			}
			d += vb - va
		}
		return float64(d) / eventRunN, ok
	}
	var rows []EventRow
	for _, w := range EventWorkloads {
		for _, e := range KernelEvents {
			r := EventRow{Event: e.Kernel, Workload: w.Name, Note: e.Note}
			var ok bool
			r.Linux, ok = perOp(lc[w.Name], e.Kernel)
			r.LinuxMissing = !ok
			r.Vfslab, _ = perOp(vc[w.Name], e.Vfslab...)
			rows = append(rows, r)
		}
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Workload < rows[j].Workload })
	return rows
}

// PrintEventTable writes the table: event, workload, Linux per op,
// vfslab per op, and whether they differ.
func PrintEventTable(w io.Writer, rows []EventRow) {
	fmt.Fprintf(w, "%-26s %-13s %10s %10s\n", "event", "workload", "linux/op", "vfslab/op")
	for _, r := range rows {
		l := fmt.Sprintf("%.2f", r.Linux)
		if r.LinuxMissing {
			l = "-"
		}
		mark := ""
		if !r.LinuxMissing && r.Linux != r.Vfslab {
			mark = "  differs"
			if r.Note != "" {
				mark += " (" + r.Note + ")"
			}
		}
		fmt.Fprintf(w, "%-26s %-13s %10s %10.2f%s\n", r.Event, r.Workload, l, r.Vfslab, mark)
	}
}
