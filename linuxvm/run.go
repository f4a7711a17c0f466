package linuxvm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultDiskSize is a scratch device's size when a script asks for none:
// 8 GiB, so that mke2fs's defaults give 4 KiB blocks as on xfstests' usual
// scratch devices.
const DefaultDiskSize = 8 << 30

// DefaultDisks are the scratch devices of vfslab sh, /dev/vdb../dev/vde.
var DefaultDisks = []string{"vdb", "vdc", "vdd", "vde"}

// Script is one script of a batch.
type Script struct {
	Name   string   // for messages
	Source []byte   // the script; the prelude runs before it
	Args   []string // its positional parameters
	Env    []string // its whole environment (NAME=VALUE)
	// Disks sizes the scratch devices by name ("vdb"): those not named
	// get DefaultDiskSize. Scripts whose sizes differ boot separately.
	Disks map[string]int64
	// Images attaches host image files as scratch devices by name
	// ("vdd" -> a path): the guest reads and writes a copy-on-write
	// overlay (QEMU's snapshot=on), so the file itself is never written.
	Images map[string]string
	// Keep copies scratch devices' final contents to host files by name
	// ("vdb" -> a path) when the boot ends. A script with Images or Keep
	// boots alone, so that no other script's wipe touches its devices.
	Keep map[string]string
}

// Result is what one script did on Linux.
type Result struct {
	Name     string
	Stdout   []byte
	Stderr   []byte
	Status   int    // exit status; 124 when it ran past the script timeout
	Dmesg    []byte // the kernel log lines it caused, timestamps stripped
	Elapsed  time.Duration
	TimedOut bool
	// Err is set when the script has no result: the guest died or hung
	// before it finished.
	Err error
}

// Options configure a run.
type Options struct {
	Prelude       []byte        // the prelude every script runs after
	CacheDir      string        // "" is DefaultCacheDir
	ScriptTimeout time.Duration // per script (default 300 s: a loaded host slows TCG several times)
	BootTimeout   time.Duration // until the guest's first marker (default 300 s)
	MemoryMiB     int           // guest memory (default 1024)
	CPUs          int           // guest CPUs (default 1)
	KVM           bool          // use -accel kvm instead of TCG
	// Progress, when set, is told of each boot and script as it happens.
	Progress func(string)
	// Console, when set, receives everything the guest's console prints.
	Console io.Writer
	// KernelArgs are added to the kernel's command line ("loglevel=7"
	// shows the boot on the console).
	KernelArgs string
}

// Boot describes one boot of a run.
type Boot struct {
	Release  string        // uname -r in the guest
	BootTime time.Duration // QEMU's start to the guest's first marker
	Elapsed  time.Duration // the whole boot, power-off included
	Scripts  int
}

// Run is a whole run: every boot and every script's result, in the order
// the scripts were given.
type Run struct {
	Release    string
	ConfigHash string
	Boots      []Boot
	Results    []Result
}

func (o *Options) defaults() {
	if o.ScriptTimeout <= 0 {
		o.ScriptTimeout = 300 * time.Second
	}
	if o.BootTimeout <= 0 {
		o.BootTimeout = 300 * time.Second
	}
	if o.MemoryMiB <= 0 {
		o.MemoryMiB = 1024
	}
	if o.CPUs <= 0 {
		o.CPUs = 1
	}
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// diskKey names a script's device geometry, for grouping.
func diskKey(d map[string]int64) string {
	var b strings.Builder
	for _, n := range DefaultDisks {
		sz, ok := d[n]
		if !ok || sz <= 0 {
			sz = DefaultDiskSize
		}
		fmt.Fprintf(&b, "%s:%d ", n, sz)
	}
	return b.String()
}

// Run boots the kernel as often as the scripts' devices need (once when
// they all use the same sizes) and returns every script's result. An
// error is returned only when nothing could run (the initramfs could not
// be built, QEMU could not start); a boot that dies part way leaves Err
// on the results it could not give.
func (h *Host) Run(ctx context.Context, scripts []Script, opt Options) (*Run, error) {
	opt.defaults()
	initrd, err := h.Initramfs(ctx, opt.CacheDir, opt.Prelude)
	if err != nil {
		return nil, err
	}
	run := &Run{Release: h.Release, ConfigHash: h.ConfigHash(), Results: make([]Result, len(scripts))}
	var order []string
	groups := map[string][]int{}
	for i, s := range scripts {
		k := diskKey(s.Disks)
		if len(s.Images) > 0 || len(s.Keep) > 0 {
			k = fmt.Sprintf("alone %d", i)
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		batch := make([]Script, len(idx))
		for j, i := range idx {
			batch[j] = scripts[i]
		}
		boot, res, err := h.boot(ctx, initrd, batch, opt)
		if err != nil && res == nil {
			return nil, err
		}
		if boot.Release != "" {
			run.Release = boot.Release
		}
		run.Boots = append(run.Boots, boot)
		for j, i := range idx {
			run.Results[i] = res[j]
		}
		if ctx.Err() != nil {
			return run, ctx.Err()
		}
	}
	return run, nil
}

// marker matches the guest's progress lines on the console.
var marker = regexp.MustCompile(`VFSLAB-(BOOTED|START|END|DONE|FAIL|WARN)\b ?(.*)`)

// boot runs one batch in one boot.
func (h *Host) boot(ctx context.Context, initrd string, batch []Script, opt Options) (Boot, []Result, error) {
	var boot Boot
	boot.Scripts = len(batch)
	res := make([]Result, len(batch))
	for i, s := range batch {
		res[i].Name = s.Name
	}
	dir, err := os.MkdirTemp("", "vfslab-linux-")
	if err != nil {
		return boot, nil, err
	}
	defer os.RemoveAll(dir)
	// The initrd is the base archive followed by the batch's.
	rd := filepath.Join(dir, "initrd")
	if err := concatInitrd(rd, initrd, batch, opt.ScriptTimeout); err != nil {
		return boot, nil, err
	}
	results := filepath.Join(dir, "results.img")
	if err := sparse(results, 256<<20); err != nil {
		return boot, nil, err
	}
	args := []string{
		"-nodefaults", "-no-user-config", "-no-reboot", "-display", "none",
		"-m", strconv.Itoa(opt.MemoryMiB), "-smp", strconv.Itoa(opt.CPUs),
		"-kernel", h.Kernel, "-initrd", rd,
		"-append", strings.TrimSpace("console=ttyS0 quiet panic=-1 no_timer_check rdinit=/init oops=panic mitigations=off cryptomgr.notests " + opt.KernelArgs),
		"-serial", "stdio",
		"-drive", "file=" + results + ",format=raw,if=virtio,cache=unsafe",
	}
	if opt.KVM {
		args = append(args, "-accel", "kvm", "-cpu", "host")
	} else {
		args = append(args, "-accel", "tcg", "-cpu", "max")
	}
	sizes := batch[0].Disks
	for _, n := range DefaultDisks {
		if img := batch[0].Images[n]; img != "" {
			if _, err := os.Stat(img); err != nil {
				return boot, nil, fmt.Errorf("linux: image for %s: %v", n, err)
			}
			args = append(args, "-drive", "file="+img+",format=raw,if=virtio,snapshot=on")
			continue
		}
		sz, ok := sizes[n]
		if !ok || sz <= 0 {
			sz = DefaultDiskSize
		}
		p := filepath.Join(dir, n+".img")
		if err := sparse(p, sz); err != nil {
			return boot, nil, err
		}
		args = append(args, "-drive", "file="+p+",format=raw,if=virtio,cache=unsafe,discard=unmap,detect-zeroes=unmap")
	}
	total := opt.BootTimeout + time.Duration(len(batch))*(opt.ScriptTimeout+30*time.Second)
	cctx, cancel := context.WithTimeout(ctx, total)
	defer cancel()
	cmd := exec.CommandContext(cctx, h.QEMU, args...)
	cmd.Stdin = nil
	dieWithParent(cmd)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return boot, nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	opt.progress("linux: booting %s under %s (%d scripts)", h.Release, accelName(opt.KVM), len(batch))
	if err := cmd.Start(); err != nil {
		return boot, nil, fmt.Errorf("linux: starting %s: %v", h.QEMU, err)
	}
	// The watchdog: the guest must boot within BootTimeout and finish each
	// script within ScriptTimeout (plus the time to reset and record).
	var mu sync.Mutex
	deadline := start.Add(opt.BootTimeout)
	why := ""
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				mu.Lock()
				late := now.After(deadline)
				mu.Unlock()
				if late {
					mu.Lock()
					if why == "" {
						why = "the guest stopped answering"
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		}
	}()
	var console bytes.Buffer
	cur := -1
	var began time.Time
	elapsed := make([]time.Duration, len(batch))
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		console.WriteString(line + "\n")
		if opt.Console != nil {
			fmt.Fprintln(opt.Console, line)
		}
		m := marker.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		mu.Lock()
		switch m[1] {
		case "BOOTED":
			boot.BootTime = time.Since(start)
			if f := strings.Fields(m[2]); len(f) > 0 {
				boot.Release = f[0]
			}
			deadline = time.Now().Add(opt.ScriptTimeout + 60*time.Second)
			opt.progress("linux: booted %s in %.1f s (guest uptime %s s)", boot.Release, boot.BootTime.Seconds(), strings.Join(strings.Fields(m[2])[1:], " "))
		case "START":
			cur++
			began = time.Now()
			deadline = time.Now().Add(opt.ScriptTimeout + 60*time.Second)
			if cur < len(batch) {
				opt.progress("linux: [%d/%d] %s", cur+1, len(batch), batch[cur].Name)
			}
		case "END":
			if cur >= 0 && cur < len(batch) {
				elapsed[cur] = time.Since(began)
			}
			deadline = time.Now().Add(opt.ScriptTimeout + 60*time.Second)
		case "FAIL":
			why = "the guest failed: " + m[2]
		case "WARN":
			opt.progress("linux: guest: %s", m[2])
		}
		mu.Unlock()
	}
	close(stop)
	werr := cmd.Wait()
	boot.Elapsed = time.Since(start)
	for n, dst := range batch[0].Keep {
		if err := keepDisk(filepath.Join(dir, n+".img"), dst); err != nil {
			return boot, nil, fmt.Errorf("linux: keeping %s: %v", n, err)
		}
	}
	recs, perr := parseResults(results)
	for i := range res {
		r, ok := recs[i]
		if !ok {
			reason := why
			switch {
			case reason != "":
			case ctx.Err() != nil:
				reason = ctx.Err().Error()
			case cctx.Err() != nil:
				reason = "the boot ran past its time limit"
			case boot.BootTime == 0:
				reason = "the guest did not boot"
			default:
				reason = "the guest ended before it"
			}
			if perr != nil {
				reason += " (" + perr.Error() + ")"
			}
			res[i].Err = fmt.Errorf("linux: no result: %s%s", reason, consoleTail(&console, &stderr, werr))
			continue
		}
		r.Name = batch[i].Name
		r.Elapsed = elapsed[i]
		res[i] = r
	}
	return boot, res, nil
}

// consoleTail is the last lines of the console and QEMU's errors, to say
// why a boot failed.
func consoleTail(console, qemuErr *bytes.Buffer, werr error) string {
	lines := strings.Split(strings.TrimSpace(console.String()), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	s := ""
	if t := strings.TrimSpace(strings.Join(lines, "\n")); t != "" {
		s += "; console:\n" + t
	}
	if e := strings.TrimSpace(qemuErr.String()); e != "" {
		s += "\nqemu: " + e
	}
	if werr != nil && !strings.Contains(s, werr.Error()) {
		s += "\nqemu: " + werr.Error()
	}
	return s
}

func accelName(kvm bool) string {
	if kvm {
		return "KVM"
	}
	return "TCG"
}

// sparse makes a sparse file of size bytes.
func sparse(p string, size int64) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// concatInitrd writes the base archive followed by the batch's: for
// script i, /batch/NNN/{script.sh,env,args,timeout}.
func concatInitrd(dst, base string, batch []Script, timeout time.Duration) error {
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	in, err := os.Open(base)
	if err != nil {
		out.Close()
		return err
	}
	_, err = io.Copy(out, in)
	in.Close()
	if err != nil {
		out.Close()
		return err
	}
	t := tree{}
	for i, s := range batch {
		d := fmt.Sprintf("batch/%03d", i)
		t.file(d+"/script.sh", 0o755, s.Source)
		t.file(d+"/env", 0o644, nulList(s.Env))
		t.file(d+"/args", 0o644, nulList(s.Args))
		t.file(d+"/timeout", 0o644, []byte(strconv.Itoa(int(timeout.Seconds()))+"\n"))
	}
	w := bufio.NewWriter(out)
	if err := t.writeCpio(w, nil); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func nulList(l []string) []byte {
	var b bytes.Buffer
	for _, s := range l {
		b.WriteString(s)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// parseResults reads the records the guest wrote to the results disk.
// A record cut short (the guest died while writing it) is left out.
func parseResults(p string) (map[int]Result, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRecords(bufio.NewReader(f))
}

// readRecords parses records until the zeroes after the last one.
func readRecords(r *bufio.Reader) (map[int]Result, error) {
	out := map[int]Result{}
	cur := map[string][]byte{}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if strings.Trim(line, "\x00") == "" {
				return out, nil
			}
			return out, errors.New("a record cut short")
		}
		f := strings.Fields(strings.TrimRight(line, "\n"))
		switch {
		case len(f) == 0 || strings.HasPrefix(line, "\x00"):
			return out, nil
		case f[0] == "VFSLAB-FILE" && len(f) == 4:
			n, err := strconv.Atoi(f[3])
			if err != nil || n < 0 {
				return out, fmt.Errorf("bad record line %q", line)
			}
			b := make([]byte, n)
			if _, err := io.ReadFull(r, b); err != nil {
				return out, errors.New("a record cut short")
			}
			cur[f[2]] = b
		case f[0] == "VFSLAB-RECORD-END" && len(f) == 2:
			i, err := strconv.Atoi(f[1])
			if err != nil {
				return out, fmt.Errorf("bad record line %q", line)
			}
			st, _ := strconv.Atoi(strings.TrimSpace(string(cur["status"])))
			out[i] = Result{
				Stdout:   cur["stdout"],
				Stderr:   cur["stderr"],
				Status:   st,
				Dmesg:    StripTimestamps(cur["dmesg"]),
				TimedOut: st == 124,
			}
			cur = map[string][]byte{}
		default:
			return out, fmt.Errorf("bad record line %q", line)
		}
	}
}

// timestamp is dmesg's "[    1.234567] " prefix.
var timestamp = regexp.MustCompile(`(?m)^\[\s*\d+\.\d+\] ?`)

// StripTimestamps removes dmesg's timestamps from every line.
func StripTimestamps(b []byte) []byte {
	return timestamp.ReplaceAll(b, nil)
}

// keepDisk moves a scratch device's file to dst (copying, holes kept as
// holes, when dst is on another file system).
func keepDisk(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	zero := make([]byte, len(buf))
	var off int64
	for {
		n, rerr := io.ReadFull(in, buf)
		if n > 0 {
			if !bytes.Equal(buf[:n], zero[:n]) {
				if _, err := out.WriteAt(buf[:n], off); err != nil {
					out.Close()
					return err
				}
			}
			off += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			out.Close()
			return rerr
		}
	}
	if err := out.Truncate(fi.Size()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
