package sim

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// The read workload is seed 003's experiment scaled down: Herbert Xu read
// an 8 GB encrypted file on ext4 mounted over a loop device backed by a
// tmpfs file, with xts-vaes, and timed the read of the whole file for
// each way of decrypting the bios. Here the file is `mib` MiB on a real
// ext4 mount (mkfs.ext4 -O encrypt, a v2 policy with AES-256-XTS
// contents, the key added) whose device is a loop device over memory
// (vfs.BlockDevice.LoopSetup: the loop worker copies each bio from the
// backing store in a task of its own, as drivers/block/loop.c does over a
// tmpfs file). An operation reads the file from the start with read(2)
// in bs-KiB user buffers (default 256 KiB: cat's buffer, coreutils'
// IO_BUFSIZE, 256 KiB since 2024 and 128 KiB before; with it the
// readahead windows, and so the bios, are the 256 KiB seed 003 reports)
// after drop_caches 1, so that every page is read cold, as most of an 8 GB
// file is on the seed's machine: filemap_read -> readahead ->
// ext4_mpage_readpages -> submit_bio -> the loop worker -> mpage_end_io ->
// fscrypt (on the fscrypt_read_queue workqueue or, in the variants that
// removed it, in the loop worker) -> folio_end_read -> copy_page_to_iter.
//
// The bio variant as posted decrypts every data unit after the first of
// a bio with a wrong tweak: the workload does not fail for it but counts
// the pages that came back wrong (read_corrupt_pages per operation: every
// page in the counting run, two per user buffer in the timed runs).

// What decides the order of the four variants in the model (pprof of
// BenchmarkReadWorkload, whose cpu-ns/op is the process's CPU time per
// operation, and the events of a counting run): every variant does the
// same readahead, bios, loop-worker copies and copy_to_user, and the
// same AES-XTS work on every data unit; the copies (the loop worker's
// from the backing store and copy_to_user: twice the file) are the
// largest share of an operation, the cipher the next. What differs is
// what seed 003 changed: the requests (one per 4 KiB data unit, each
// allocated, set up, walked and freed, against one per bio for bio), the
// allocations chain adds, and where decryption runs (a kworker hop per
// bio for workqueue, the loop worker otherwise). A hop costs little CPU;
// it buys parallelism only where idle CPUs are (decryption of one bio
// beside the loop worker's copy of the next), so on a machine without
// idle CPUs workqueue and inline tie and the number of requests sets the
// order: bio first. explainRead computes the same comparison from each
// run's own figures.

// EvReadCorruptPages counts the pages a read workload operation found
// different from what was written.
var EvReadCorruptPages = events.Register("read_corrupt_pages", "pages the read workload read back different from what it wrote (the counting run checks every page)")

var _ = Register(&Workload{
	Name:    "read",
	Summary: "read(2) an encrypted file on ext4 over a loop device, cold (drop_caches 1), in bs-KiB buffers: seed 003's experiment",
	Patch:   fscrypt.CryptoBioPatch,
	Params: []Param{
		{Name: "mib", Default: "64", Help: "file size in MiB (one operation reads it all)", Range: IntRange(1, 256)},
		{Name: "bs", Default: "256", Help: "read(2) size in KiB (256: cat; 1024: dd bs=1M); it sets the readahead window and so the bio size", Range: IntRange(4, 4096)},
		{Name: "requests", Default: "upstream", Patch: fscrypt.FnameOnstackPatch,
			Help: "per-data-unit requests, as the fscrypt-fname-onstack variant: upstream (on-stack, sync tfm) or base (kmalloc'd, as seed 003's kernel)"},
	},
	// Each data unit's request is allocated as the fscrypt-fname-onstack
	// variant does (the requests parameter).
	Exercises: []*patch.Patch{fscrypt.FnameOnstackPatch},
	Setup:     setupRead,
	Headlines: []*Headline{{
		Patch: fscrypt.CryptoBioPatch,
		// The seed's kernel kmalloc'd each data unit's request.
		Params:     map[string]string{"mib": "64", "requests": "base"},
		Metric:     MetricMB,
		SeedRatios: map[string]float64{"inline": 2.4 / 2.5, "chain": 1, "bio": 2.4 / 2.1},
		Seed:       "8 GB file, ext4 on loop on tmpfs, xts-vaes: workqueue 2.4 s, inline 2.5 s, chain ~2.4 s, bio 2.1 s",
		Explain:    explainRead,
		// The report's budget (docs/CLI.md): reads of the whole file
		// per timed run, one in the counting run; under slub_debug a
		// 16 MiB file.
		Unit:      ParamUnit("mib", "MiB"),
		Size:      Size{Ops: 2, Count: 5, CountOps: 1},
		DebugSize: Size{Params: map[string]string{"mib": "16"}, Ops: 2, Count: 4, CountOps: 1},
	}},
})

// readFilePath is the file the read workload reads.
const readFilePath = "/secret/file"

type readInst struct {
	env   *Env
	sys   *vfs.System
	setup *kernel.Task
	size  int
	bs    int
	// want is the file's plaintext.
	want  []byte
	procs []*vfs.Proc
}

// readPattern fills the plaintext of page index of the file, so a page
// decrypted with a wrong tweak or from the wrong block is detected.
func readPattern(p []byte, index uint64) {
	for i := range p {
		p[i] = byte(uint64(i)*131 + index*7 + uint64(i>>8))
	}
}

func setupRead(env *Env) (Instance, error) {
	mib, err := strconv.Atoi(env.Param("mib"))
	if err != nil || mib <= 0 || mib > 256 {
		return nil, fmt.Errorf("read: bad mib %q: want 1..256", env.Param("mib"))
	}
	bs, err := strconv.Atoi(env.Param("bs"))
	if err != nil || bs < 4 || bs > 4096 || bs%4 != 0 {
		return nil, fmt.Errorf("read: bad bs %q: want a multiple of 4 in 4..4096 (KiB)", env.Param("bs"))
	}
	// The requests parameter is the kernel's fscrypt-fname-onstack
	// variant, which Run has selected (Param.Patch).
	t := env.K.NewTask("read-setup")
	in := &readInst{env: env, setup: t, size: mib << 20, bs: bs << 10}
	fail := func(err error) (Instance, error) {
		in.Close()
		return nil, fmt.Errorf("read: %w", err)
	}
	fst, err := fsType("ext4", true)
	if err != nil {
		return fail(err)
	}
	opts, err := vfs.FormatFeatures(t, fst, vfs.Features{Encrypt: true}, "")
	if err != nil {
		return fail(err)
	}
	// losetup /dev/loop0 on the tmpfs file that holds the image.
	opts.Device.LoopSetup(env.K, 0)
	sys, p, err := vfs.Boot(t, vfs.Config{}, fst, opts)
	if err != nil {
		return fail(err)
	}
	in.sys = sys
	defer p.Exit(t)
	if err := p.Mkdir(t, "/secret", 0o755); err != nil {
		return fail(err)
	}
	if _, err := p.EncryptDir(t, "/secret", bare.PlaintextStream("vfslab read key", 64), 0, 0); err != nil {
		return fail(err)
	}
	fd, err := p.Open(t, readFilePath, vfs.O_CREAT|vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
	if err != nil {
		return fail(err)
	}
	in.want = acquirePlaintext(in.size)
	for off := 0; off < in.size; off += 1 << 20 {
		if _, err := p.Write(t, fd, in.want[off:min(off+1<<20, in.size)]); err != nil {
			p.Close(t, fd)
			return fail(err)
		}
	}
	if err := p.Close(t, fd); err != nil {
		return fail(err)
	}
	// Write the file back and drop its page cache now, as the first
	// operation would: a comparison sets every variant up before the
	// first runs, and each would otherwise hold its file twice.
	if err := sys.Sync(t); err != nil {
		return fail(err)
	}
	sys.DropCaches(t, 1)
	return in, nil
}

// The plaintext of the read workload's file depends only on its size:
// the machines of one comparison share one copy (read-only), released
// with the last of them.
var plaintexts = struct {
	sync.Mutex
	bufs map[int]*sharedPlaintext
}{bufs: map[int]*sharedPlaintext{}}

type sharedPlaintext struct {
	buf  []byte
	refs int
}

// acquirePlaintext returns the plaintext of a file of size bytes.
func acquirePlaintext(size int) []byte {
	plaintexts.Lock()
	defer plaintexts.Unlock()
	sp := plaintexts.bufs[size]
	if sp == nil {
		sp = &sharedPlaintext{buf: make([]byte, size)}
		for off := 0; off < size; off += vfs.PageSize {
			readPattern(sp.buf[off:off+vfs.PageSize], uint64(off/vfs.PageSize))
		}
		plaintexts.bufs[size] = sp
	}
	sp.refs++
	return sp.buf
}

// releasePlaintext drops a reference acquirePlaintext gave.
func releasePlaintext(size int) {
	plaintexts.Lock()
	defer plaintexts.Unlock()
	if sp := plaintexts.bufs[size]; sp != nil {
		if sp.refs--; sp.refs <= 0 {
			delete(plaintexts.bufs, size)
		}
	}
}

// Worker opens the file as worker w's process; the operation is
// drop_caches 1, then read(2) from offset 0 to the end in bs-byte
// buffers, then the data check.
func (in *readInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	p := in.sys.NewProc(t, nil)
	in.procs = append(in.procs, p)
	fd, err := p.Open(t, readFilePath, vfs.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("read: open %s: %w", readFilePath, err)
	}
	buf := make([]byte, in.bs)
	checkAll := t.Ev != nil
	return func(i int) (err error) {
		defer t.Recover(&err)
		defer t.K.FlushWorkqueues()
		// 1 | 4: the page cache, and drop_caches' log line silenced
		// after the first (its "stfu" bit), as a benchmark loop does.
		in.sys.DropCaches(t, 5)
		if _, err := p.Lseek(t, fd, 0, vfs.SEEK_SET); err != nil {
			return err
		}
		off := 0
		for {
			n, err := p.Read(t, fd, buf)
			if err != nil {
				return err
			}
			if n == 0 {
				break
			}
			if off+n > in.size {
				return fmt.Errorf("read: %d bytes past the end of a %d-byte file", off+n-in.size, in.size)
			}
			t.Add(EvReadCorruptPages, uint64(in.check(buf[:n], off, checkAll)))
			off += n
		}
		if off != in.size {
			return fmt.Errorf("read: read %d of %d bytes", off, in.size)
		}
		return nil
	}, nil
}

// check compares what a read(2) at off returned with the plaintext and
// returns the number of wrong pages: every page with all, else the first
// two of the buffer (a bio's first data unit and its second, the first
// the bio variant as posted gets wrong).
func (in *readInst) check(got []byte, off int, all bool) int {
	bad := 0
	for p := 0; p < len(got); p += vfs.PageSize {
		if !all && p >= 2*vfs.PageSize {
			break
		}
		end := min(p+vfs.PageSize, len(got))
		if !bytes.Equal(got[p:end], in.want[off+p:off+end]) {
			bad++
		}
	}
	return bad
}

// BytesPerOp is the file size: one operation reads the whole file.
func (in *readInst) BytesPerOp() int64 { return int64(in.size) }

func (in *readInst) Close() error {
	if in.want != nil {
		releasePlaintext(in.size)
		in.want = nil
	}
	for _, p := range in.procs {
		p.Exit(in.setup)
	}
	if in.setup != nil {
		in.setup.K.FlushWorkqueues()
		if in.sys != nil {
			// The cached folios go back to the page allocator.
			in.sys.DropCaches(in.setup, 1)
		}
		in.setup.Exit()
	}
	return nil
}

// explainRead is the read headline's Explain: from a run's counting-run
// events and timed medians, what every variant does per operation and
// what each difference between two variants costs here. The pairs isolate
// one mechanism each: inline against workqueue differ only in where the
// decryption runs (a kworker hop per bio, off the loop worker, against
// the loop worker itself), bio against inline only in the number of
// requests (one per bio against one per data unit, with their kmallocs
// when requests=base), chain against inline only in the chained requests'
// extra allocations. Every figure is the run's own, so the text stays
// true when a cost in the model changes.
func explainRead(g *Group) string {
	by := map[string]*Measurement{}
	var ms []*Measurement
	for _, m := range g.Measurements {
		if m.Events == nil || len(m.NsPerOp) == 0 {
			return ""
		}
		by[m.Variant] = m
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		return ""
	}
	ev := func(m *Measurement, e events.Event) float64 { return m.Events[e.Name()] }
	ns := func(m *Measurement) float64 { return m.Stats(nil).NsPerOp.Median }
	// noise says whether two variants' times differ significantly.
	noise := func(a, b *Measurement) string {
		if p := a.Stats(b).NsPerOp.P; p >= 0.05 {
			return fmt.Sprintf(", within noise: p=%.2f", p)
		}
		return ""
	}
	mbs := func(m *Measurement) float64 { return m.Stats(nil).MBPerSec.Median }
	var b strings.Builder
	// The order.
	sorted := append([]*Measurement(nil), ms...)
	sort.SliceStable(sorted, func(i, j int) bool { return mbs(sorted[i]) > mbs(sorted[j]) })
	b.WriteString("order here: ")
	for i, m := range sorted {
		if i > 0 {
			b.WriteString(" > ")
		}
		fmt.Fprintf(&b, "%s %.0f MB/s", m.Variant, mbs(m))
	}
	b.WriteString(". ")
	// What every variant does alike.
	base := ms[0]
	bios := ev(base, vfs.EvBioSubmit)
	if bios > 0 {
		fmt.Fprintf(&b, "Per op, alike in all: %.0f bios of %.0f KiB (one per readahead window), each handed to the loop worker (%.0f loop requests), which copies %.0f MiB from the backing store; copy_to_user %.0f MiB; %.0f data units decrypted. ",
			bios, ev(base, vfs.EvBioSubmitBytes)/bios/1024, ev(base, block.EvLoopRequest),
			ev(base, block.EvLoopBytes)/(1<<20), ev(base, vfs.EvCopyToUser)/(1<<20), ev(base, fscrypt.EvDataUnitCrypt))
	}
	// What differs.
	b.WriteString("Differs: ")
	for i, m := range ms {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %.0f skcipher requests, %.0f kmallocs, %.0f decrypt works queued", m.Variant,
			m.Events["skcipher_decrypt"], m.Kmallocs, ev(m, fscrypt.EvDecryptWork))
		if bad := ev(m, EvReadCorruptPages); bad > 0 {
			fmt.Fprintf(&b, ", %.0f pages read back wrong", bad)
		}
	}
	b.WriteString(". ")
	// What each difference costs in this run.
	wq, in, ch, bi := by["workqueue"], by["inline"], by["chain"], by["bio"]
	var costs []string
	if wq != nil && in != nil {
		if works := ev(wq, fscrypt.EvDecryptWork); works > 0 {
			d := (ns(wq) - ns(in)) / works
			costs = append(costs, fmt.Sprintf("the workqueue's hop per bio %s %.1f us against decrypting in the loop worker (%.0f hops%s)", costOrGain(d), abs(d)/1e3, works, noise(wq, in)))
		}
	}
	if in != nil && bi != nil {
		if dr := in.Events["skcipher_decrypt"] - bi.Events["skcipher_decrypt"]; dr > 0 {
			d := (ns(in) - ns(bi)) / dr
			costs = append(costs, fmt.Sprintf("a per-data-unit request %s %.2f us against one request per bio (%.0f fewer with bio%s)", costOrGain(d), abs(d)/1e3, dr, noise(in, bi)))
		}
	}
	if ch != nil && in != nil {
		if dk := ch.Kmallocs - in.Kmallocs; dk > 0 {
			d := (ns(ch) - ns(in)) / dk
			costs = append(costs, fmt.Sprintf("each of chain's %.0f extra kmallocs (chained requests and their IVs) %s %.2f us%s", dk, costOrGain(d), abs(d)/1e3, noise(ch, in)))
		}
	}
	if len(costs) > 0 {
		b.WriteString("Measured here: " + strings.Join(costs, "; ") + ". ")
	}
	// The largest significant gap between the pairs, against the
	// fastest variant's op.
	if fast := sorted[0]; ns(fast) > 0 && bios > 0 {
		var biggest string
		var big float64
		for _, c := range []struct {
			name string
			a, b *Measurement
		}{
			{"where the decryption runs (workqueue vs inline)", wq, in},
			{"the number of requests (inline vs bio)", in, bi},
			{"chain's allocations (chain vs inline)", ch, in},
		} {
			if c.a == nil || c.b == nil || c.a.Stats(c.b).NsPerOp.P >= 0.05 {
				continue
			}
			if d := abs(ns(c.a) - ns(c.b)); d > big {
				big, biggest = d, c.name
			}
		}
		if biggest != "" {
			fmt.Fprintf(&b, "The largest significant gap, %.1f%% of the fastest variant's op, comes from %s.", 100*big/ns(fast), biggest)
		} else {
			b.WriteString("No gap between the pairs is significant in this run (p >= 0.05): more runs (--count) or a quieter machine separate them.")
		}
	}
	return strings.TrimSpace(b.String())
}

func costOrGain(d float64) string {
	if d < 0 {
		return "saves"
	}
	return "costs"
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
