package review

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/vfs"
)

// detect runs the detectors a debug kernel has after step i on m: KASAN
// and BUG records (kernel.BugLog), the object tracker's double frees and
// writes after free (kmem.Tracker), WARN and DMA-API lines of the log,
// an RCU read-side section left open by the syscall (a sleep inside it
// is "BUG: sleeping function called from invalid context"), and
// dentries whose lockref count went below zero. Each report becomes a
// Finding tagged with step i.
func detect(m *machine, i int) []Finding {
	var out []Finding
	add := func(f Finding) {
		f.step = i
		out = append(out, f)
	}
	for _, b := range m.newBugs() {
		add(bugFinding(b))
	}
	for _, r := range m.k.Tracker.Check() {
		add(trackFinding(r))
	}
	var logged []Finding
	dma := false
	for _, line := range m.newLog() {
		if f, ok := logFinding(line); ok {
			logged = append(logged, f)
			dma = dma || f.Kind == KindDMAStack
		}
	}
	for _, f := range logged {
		// CONFIG_DMA_API_DEBUG's report is a WARN (err_printk): its
		// WARNING line belongs to the DMA finding.
		if dma && f.Kind == KindWarning && strings.Contains(strings.ToLower(f.Detail), "dma") {
			continue
		}
		add(f)
	}
	if m.t.RCU.Held() {
		add(Finding{Kind: KindBug, Function: "rcu_read_lock",
			Detail: "the syscall returned to user space inside an RCU read-side critical section (a sleeping call in it is \"BUG: sleeping function called from invalid context\")"})
		for m.t.RCU.Held() {
			m.t.RCU.ReadUnlock()
		}
	}
	out = append(out, refcountFindings(m, i)...)
	return out
}

// bugFinding classifies a BUG or KASAN record.
func bugFinding(b *kernel.Bug) Finding {
	kind := KindBug
	switch {
	case strings.Contains(b.Kind, "out-of-bounds"):
		kind = KindOOB
	case strings.Contains(b.Kind, "use-after-free"):
		kind = KindUAF
	case strings.Contains(b.Kind, "double-free"):
		kind = KindDoubleFree
	}
	return Finding{Kind: kind, Function: KernelName(b.Func), Detail: b.Error()}
}

// trackFinding turns a tracker report into a KASAN finding with the
// allocation and free stacks, as KASAN prints them.
func trackFinding(r kmem.TrackReport) Finding {
	o := r.Object
	f := Finding{Kind: KindDoubleFree}
	where := r.Stack
	if r.Kind == "use-after-free" {
		f.Kind = KindUAF
		where = o.FreeStack()
	}
	f.Function = firstKernelFrame(where)
	f.Stack = kernelStack(o.AllocStack())
	detail := fmt.Sprintf("KASAN: %s of a %d-byte object from %s", r.Kind, o.Size, o.Site)
	if r.Offset >= 0 {
		detail += fmt.Sprintf(", byte %d written after the free", r.Offset)
	}
	detail += "; allocated by " + stackString(o.AllocStack()) + "; freed by " + stackString(o.FreeStack())
	if r.Kind == "double-free" {
		detail += "; freed again by " + stackString(r.Stack)
	}
	f.Detail = detail
	return f
}

// logFinding classifies a kernel log line: "DMA-API: ..." (with or
// without WARN's prefix) is a DMA from the stack or vmalloc memory
// (kernel/dma/debug.c check_for_stack), "WARNING:" a WARN, a "BUG:" line
// that is not a BUG record's (lockdep's) a bug.
func logFinding(line string) (Finding, bool) {
	switch {
	case strings.Contains(line, "DMA-API"):
		return Finding{Kind: KindDMAStack, Function: "check_for_stack", Detail: line}, true
	case strings.HasPrefix(line, "WARNING:"):
		kind := KindWarning
		low := strings.ToLower(line)
		if strings.Contains(low, "refcount") || strings.Contains(low, "underflow") || strings.Contains(low, "has no reference") {
			// refcount_t's "underflow; use-after-free" WARN, dput's
			// WARN_ON_ONCE(d_lockref.count <= 0).
			kind = KindRefcount
		}
		return Finding{Kind: kind, Function: warnFunction(line), Detail: line}, true
	case strings.HasPrefix(line, "BUG: MAX_LOCK_DEPTH"):
		return Finding{Kind: KindBug, Function: "__lock_acquire", Detail: line}, true
	}
	return Finding{}, false
}

// warnFunction names the function of a "WARNING: CPU: 0 PID: n at
// FILE:LINE msg" line: the function the message starts with ("dput:
// ..."), else the file's base name and line (the model's WARN lines carry
// no symbol).
func warnFunction(line string) string {
	_, rest, ok := strings.Cut(line, " at ")
	if !ok {
		return "warn"
	}
	loc, msg, _ := strings.Cut(rest, " ")
	if fn, _, ok := strings.Cut(msg, ": "); ok && fn != "" && strings.IndexFunc(fn, func(r rune) bool {
		return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return fn
	}
	if i := strings.LastIndexByte(loc, '/'); i >= 0 {
		loc = loc[i+1:]
	}
	return loc
}

// refcountFindings walks the dentries under /d and reports a lockref
// whose count is negative and not lockref_mark_dead's (a dput too many:
// the kernel's lockref underflow).
func refcountFindings(m *machine, i int) []Finding {
	var out []Finding
	d, err := m.p.LookupDentry(m.t, workDir, false)
	if err != nil {
		return nil
	}
	defer dput(m.t, d)
	var walk func(d *vfs.Dentry, depth int)
	walk = func(d *vfs.Dentry, depth int) {
		var kids []*vfs.Dentry
		dcache.ForEachChild(m.t, d, func(c *vfs.Dentry) bool {
			if n := c.Lockref().CountLocked(); n < 0 && n != dcache.LockrefDead {
				out = append(out, Finding{Kind: KindRefcount, Function: "lockref_put_return", step: i,
					Detail: fmt.Sprintf("dentry %q: d_lockref.count = %d (a dput without its dget)", c.Name().Name, n)})
			}
			if depth < 4 {
				kids = append(kids, c)
			}
			return true
		})
		for _, c := range kids {
			walk(c, depth+1)
		}
	}
	walk(d, 0)
	return out
}

// modelFrames are the model's own helpers, which the kernel has inline in
// their callers (or has not at all): a finding names the kernel function
// around them.
var modelFrames = map[string]bool{
	"fscrypt.cryptAllocated": true, "fscrypt.fnameCrypt": true, "fscrypt.contentsCrypt": true,
	"fscrypt.traceWaitReq": true, "fscrypt.traceSkcipherCrypt": true,
}

// firstKernelFrame names the first frame of a stack outside the
// allocator, the Crypto API's request helpers and the model's helpers.
func firstKernelFrame(stack []string) string {
	for _, f := range stack {
		if strings.HasPrefix(f, "crypto.") || strings.HasPrefix(f, "kernel.") || modelFrames[f] {
			continue
		}
		return KernelName(f)
	}
	if len(stack) > 0 {
		return KernelName(stack[0])
	}
	return "?"
}

// harnessFrame reports a frame of the review's own harness (or of a
// test's), where a kernel stack ends.
func harnessFrame(f string) bool {
	for _, p := range []string{"testing.", "review.Step.", "review.execute", "review.(*machine).", "review/fault."} {
		if strings.HasPrefix(f, p) {
			return true
		}
	}
	return false
}

// stackDepth is how many frames a finding's stack keeps.
const stackDepth = 8

// kernelStack turns a stack of the model's Go functions into kernel
// function names, innermost first, up to the review's own harness and at
// most stackDepth frames.
func kernelStack(stack []string) []string {
	var names []string
	for _, f := range stack {
		if harnessFrame(f) {
			break
		}
		names = append(names, KernelName(f))
		if len(names) == stackDepth {
			break
		}
	}
	return names
}

// stackString renders a stack as kernel names, innermost first.
func stackString(stack []string) string {
	if names := kernelStack(stack); len(names) > 0 {
		return strings.Join(names, " <- ")
	}
	return "?"
}

// KernelName turns a Go function of the model into the kernel function it
// models, by the project's naming rule: the package and receiver are
// dropped, closures name their function, camel case becomes snake case
// ("GenericCIMatch" is generic_ci_match), and fscrypt's exported
// functions get the fscrypt_ prefix Go leaves out ("fscrypt.FnameEncrypt"
// is fscrypt_fname_encrypt). A name without a package (a kernel name
// already) is returned as it is.
func KernelName(goName string) string {
	pkg, name, ok := strings.Cut(goName, ".")
	if !ok || strings.Contains(pkg, " ") {
		return goName
	}
	// "(*T).Method" -> "TMethod" (decrypted_name_prealloc_resize);
	// "F.func1" -> "F".
	exported := name != "" && unicode.IsUpper(rune(name[0]))
	if strings.HasPrefix(name, "(") {
		if typ, m, ok := strings.Cut(name, ")."); ok {
			exported = m != "" && unicode.IsUpper(rune(m[0]))
			typ = strings.TrimLeft(typ, "(*")
			if j := strings.IndexByte(typ, '['); j >= 0 {
				typ = typ[:j]
			}
			if m != "" && unicode.IsLower(rune(m[0])) {
				m = strings.ToUpper(m[:1]) + m[1:]
			}
			name = typ + m
		}
	}
	if i := strings.Index(name, ".func"); i >= 0 {
		name = name[:i]
	}
	if j := strings.IndexByte(name, '['); j >= 0 {
		name = name[:j]
	}
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			nextLower := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	s := b.String()
	if exported && pkg == "fscrypt" && !strings.HasPrefix(s, "fscrypt_") {
		s = "fscrypt_" + s
	}
	return s
}

// liveBySite counts the objects every task of m holds at each site
// (kmalloc'd buffers and kmem_cache objects alike), and keeps the first
// tracked object of each site for its allocation stack.
func liveBySite(m *machine) (map[string]int64, map[string]*kmem.Object) {
	st := new(kmem.Stats)
	for _, t := range m.k.CountedTasks() {
		st.Merge(t.Stats)
	}
	if !m.k.Counting() {
		st.Merge(m.t.Stats)
	}
	live := map[string]int64{}
	for _, site := range kmem.Sites() {
		if n := st.Site(site).Live(); n != 0 {
			live[site.Name()] = n
		}
	}
	objs := map[string]*kmem.Object{}
	for _, o := range m.k.Tracker.Live() {
		if o.Step >= 0 && objs[o.Site] == nil {
			objs[o.Site] = o
		}
	}
	return live, objs
}

// leakFindings compares the live objects at teardown: a site where the
// variant holds more objects than the reference (its base, or its own
// run without injection) leaks, kmemleak's "unreferenced object" with the
// allocation backtrace of one of them.
func leakFindings(got, ref map[string]int64, objs map[string]*kmem.Object) []Finding {
	var sites []string
	for s, n := range got {
		if n > ref[s] {
			sites = append(sites, s)
		}
	}
	sort.Strings(sites)
	var out []Finding
	for _, s := range sites {
		f := Finding{Kind: KindLeak, Function: s, step: -1}
		detail := fmt.Sprintf("kmemleak: %d more objects of %s still allocated at teardown than the reference (%d vs %d)", got[s]-ref[s], s, got[s], ref[s])
		// The site is named after the kernel function that allocates
		// (skcipher_request_alloc is inline in fscrypt_fname_encrypt).
		if fn, _, ok := strings.Cut(s, ":"); ok {
			f.Function = fn
		}
		if o := objs[s]; o != nil {
			if f.Function == s {
				f.Function = firstKernelFrame(o.AllocStack())
			}
			f.step = o.Step
			f.Stack = kernelStack(o.AllocStack())
			detail += fmt.Sprintf("; unreferenced object of %d bytes allocated in step %d by %s", o.Size, o.Step+1, stackString(o.AllocStack()))
		}
		f.Detail = detail
		out = append(out, f)
	}
	return out
}
