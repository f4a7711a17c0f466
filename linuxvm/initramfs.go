package linuxvm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

//go:embed init.sh
var initScript []byte

// The guest's set_encpolicy helper (guest/set_encpolicy.c) and the xfs_io
// wrapper that calls it (guest/xfs_io.sh): xfsprogs before 6.6 has no
// set_encpolicy -s, which the sub-block data unit scenarios need.
var (
	//go:embed guest/set_encpolicy.c
	setEncpolicySource []byte
	//go:embed guest/xfs_io.sh
	xfsIoWrapper []byte
)

// layoutVersion changes when the guest's layout changes in a way the
// inputs' hash does not see (a new /etc file, a new directory).
const layoutVersion = "linuxvm-initramfs-1"

// The guest's accounts: vfslab sh's (shell/machine.go, shell/users.go).
const (
	etcPasswd = `root:x:0:0:root:/root:/bin/bash
fsgqa:x:1000:1000:fsgqa:/home/fsgqa:/bin/bash
fsgqa2:x:1001:1001:fsgqa2:/home/fsgqa2:/bin/bash
123456-fsgqa:x:123456:123456:123456-fsgqa:/home/123456-fsgqa:/bin/bash
`
	etcGroup = `root:x:0:
users:x:100:fsgqa,fsgqa2
fsgqa:x:1000:
fsgqa2:x:1001:
123456-fsgqa:x:123456:
`
	etcShells   = "/bin/sh\n/bin/bash\n/usr/bin/bash\n"
	etcNsswitch = "passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
)

// libDirs are where the dynamic loader finds libraries (Debian's
// multiarch layout).
var libDirs = []string{
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib",
}

// guestPath maps a host path into the guest's merged-/usr layout, where
// /bin, /sbin, /lib and /lib64 are links into /usr.
func guestPath(p string) string {
	p = filepath.Clean(p)
	for _, d := range []string{"/bin", "/sbin", "/lib", "/lib64"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return "/usr" + p
		}
	}
	return p
}

// builder collects the guest's tree.
type builder struct {
	t      tree
	inputs []string // what the key hashes
	seen   map[string]bool
}

// addHost copies the host file p (following its links, each link kept as
// a link so that a multi-call program sees the name it was called by) and
// the shared libraries an ELF file needs.
func (b *builder) addHost(p string) error {
	p = filepath.Clean(p)
	if b.seen[p] {
		return nil
	}
	b.seen[p] = true
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		abs := target
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(filepath.Dir(p), target)
		}
		// A link is kept relative when its target stays in the same
		// guest directory, else made absolute in the guest's layout.
		gt := guestPath(abs)
		if filepath.Dir(gt) == filepath.Dir(guestPath(p)) {
			gt = filepath.Base(gt)
		}
		b.t.symlink(guestPath(p), gt)
		b.inputs = append(b.inputs, "link "+p+" "+target)
		return b.addHost(abs)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", p)
	}
	gp := strings.Trim(guestPath(p), "/")
	b.t.parent(gp)
	b.t[gp] = &entry{mode: modeRegular | uint32(fi.Mode().Perm()), hostPath: p,
		hostSize: fi.Size(), hostModified: fi.ModTime().UnixNano()}
	b.inputs = append(b.inputs, fmt.Sprintf("file %s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
	return b.addLibs(p)
}

// addLibs adds the ELF interpreter and the DT_NEEDED libraries of p,
// recursively. A file that is not ELF (a shell script such as egrep)
// needs nothing.
func (b *builder) addLibs(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			buf := make([]byte, prog.Filesz)
			if _, err := prog.ReadAt(buf, 0); err == nil {
				if err := b.addHost(string(bytes.TrimRight(buf, "\x00"))); err != nil {
					return err
				}
			}
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return nil
	}
	for _, l := range libs {
		found := ""
		for _, d := range libDirs {
			if c := filepath.Join(d, l); fileExists(c) {
				found = c
				break
			}
		}
		if found == "" {
			return fmt.Errorf("%s needs %s, which is in none of %s", p, l, strings.Join(libDirs, " "))
		}
		if err := b.addHost(found); err != nil {
			return err
		}
	}
	return nil
}

// moduleFiles asks `modprobe --show-depends` for the files of the guest's
// modules, in load order, and which of them are built in.
func (h *Host) moduleFiles(ctx context.Context) (files, builtin []string, err error) {
	seen := map[string]bool{}
	for _, m := range guestModules {
		cmd := exec.CommandContext(ctx, h.Tools["modprobe"], "-S", h.Release, "--show-depends", m)
		out, err := cmd.Output()
		if err != nil {
			msg := ""
			if ee, ok := err.(*exec.ExitError); ok {
				msg = strings.TrimSpace(string(ee.Stderr))
			}
			return nil, nil, fmt.Errorf("modprobe --show-depends %s: %v %s", m, err, msg)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			switch {
			case len(f) >= 2 && f[0] == "insmod":
				if !seen[f[1]] {
					seen[f[1]] = true
					files = append(files, f[1])
				}
			case len(f) >= 2 && f[0] == "builtin":
				builtin = append(builtin, f[1])
			}
		}
	}
	return files, builtin, nil
}

// Initramfs returns the path of the base initramfs for prelude, building
// it into the cache directory when no archive with the same inputs is
// there. Older archives in the directory are removed.
func (h *Host) Initramfs(ctx context.Context, cacheDir string, prelude []byte) (string, error) {
	if cacheDir == "" {
		d, err := DefaultCacheDir()
		if err != nil {
			return "", err
		}
		cacheDir = d
	}
	b, err := h.collect(ctx, cacheDir, prelude)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	for _, in := range b.inputs {
		fmt.Fprintln(sum, in)
	}
	key := hex.EncodeToString(sum.Sum(nil)[:8])
	path := filepath.Join(cacheDir, "initramfs-"+key+".cpio")
	if fileExists(path) {
		return path, nil
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", err
	}
	// The modules are indexed by depmod in a staging directory, so that
	// the guest's modprobe (and the kernel's request_module through it)
	// finds exactly the modules carried.
	stage, err := os.MkdirTemp(cacheDir, "stage-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	if err := h.depmod(ctx, b, stage); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(cacheDir, "initramfs-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := b.t.writeCpio(w, h.readEntry); err != nil {
		tmp.Close()
		return "", err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	old, _ := filepath.Glob(filepath.Join(cacheDir, "initramfs-*.cpio"))
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
	return path, nil
}

// DefaultCacheDir is os.UserCacheDir()/vfslab/linux.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("linux: no cache directory for the initramfs: %v", err)
	}
	return filepath.Join(d, "vfslab", "linux"), nil
}

// collect lays out the guest's tree (everything but depmod's indexes).
func (h *Host) collect(ctx context.Context, cacheDir string, prelude []byte) (*builder, error) {
	b := &builder{t: tree{}, seen: map[string]bool{}}
	b.inputs = append(b.inputs, layoutVersion, "release "+h.Release)
	for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
		b.t.symlink(d, "usr/"+d)
	}
	for _, d := range []string{"proc", "sys", "dev", "tmp", "run", "mnt/scratch", "mnt/test", "root", "home", "etc/vfslab"} {
		b.t.dir(d, 0o755)
	}
	b.t["tmp"].mode = modeDir | 0o1777
	b.t["root"].mode = modeDir | 0o700
	b.t.char("dev/console", 0o600, 5, 1)
	b.t.char("dev/null", 0o666, 1, 3)
	names := make([]string, 0, len(h.Tools))
	for n := range h.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := h.Tools[n]
		if err := b.addHost(p); err != nil {
			return nil, fmt.Errorf("linux: carrying %s into the guest: %v", n, err)
		}
		// The command is on the guest's PATH under its own name even when
		// the host keeps it elsewhere.
		if gp := guestPath(p); filepath.Base(gp) != n || !strings.HasPrefix(gp, "/usr/") {
			b.t.symlink("usr/bin/"+n, gp)
		}
	}
	// /bin/sh is bash, as vfslab sh's sh is its one interpreter.
	if _, ok := b.t["usr/bin/sh"]; !ok {
		b.t.symlink("usr/bin/sh", "bash")
	}
	for _, a := range busyboxApplets {
		b.t.symlink("usr/bin/"+a, guestPath(h.Tools["busybox"]))
	}
	if err := h.addSetEncpolicy(ctx, b, cacheDir); err != nil {
		return nil, err
	}
	files, builtin, err := h.moduleFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("linux: %v", err)
	}
	var load []string
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("linux: module %v", err)
		}
		// Modules are decompressed on the host when it has xz: under
		// emulation the guest's decompression costs seconds a boot.
		gp := strings.Trim(guestPath(f), "/")
		unxz := strings.HasSuffix(gp, ".xz") && h.Tools["xz"] != ""
		if unxz {
			gp = strings.TrimSuffix(gp, ".xz")
		}
		b.t.parent(gp)
		b.t[gp] = &entry{mode: modeRegular | 0o644, hostPath: f, unxz: unxz, hostSize: fi.Size(), hostModified: fi.ModTime().UnixNano()}
		b.inputs = append(b.inputs, fmt.Sprintf("module %s %d %d", f, fi.Size(), fi.ModTime().UnixNano()))
		load = append(load, f)
	}
	for _, f := range []string{"modules.builtin", "modules.builtin.modinfo", "modules.order"} {
		p := filepath.Join(h.Modules, f)
		if fi, err := os.Stat(p); err == nil {
			gp := strings.Trim(guestPath(p), "/")
			b.t.parent(gp)
			b.t[gp] = &entry{mode: modeRegular | 0o644, hostPath: p}
			b.inputs = append(b.inputs, fmt.Sprintf("file %s %d %d", p, fi.Size(), fi.ModTime().UnixNano()))
		}
	}
	b.inputs = append(b.inputs, "builtin "+strings.Join(builtin, " "))
	var mods bytes.Buffer
	for _, f := range load {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".xz"), ".zst"), ".ko")
		fmt.Fprintln(&mods, name)
	}
	b.t.file("etc/vfslab/modules", 0o644, mods.Bytes())
	b.t.file("etc/passwd", 0o644, []byte(etcPasswd))
	b.t.file("etc/group", 0o644, []byte(etcGroup))
	b.t.file("etc/shells", 0o644, []byte(etcShells))
	b.t.file("etc/nsswitch.conf", 0o644, []byte(etcNsswitch))
	b.t.file("etc/hostname", 0o644, []byte("vfslab-linux\n"))
	b.t.file("etc/vfslab/release", 0o644, []byte(h.Release+"\n"))
	b.t.file("etc/vfslab/prelude.sh", 0o644, prelude)
	b.t.file("init", 0o755, initScript)
	for _, u := range []string{"fsgqa", "fsgqa2", "123456-fsgqa"} {
		b.t.dir("home/"+u, 0o755)
	}
	b.inputs = append(b.inputs, "init "+hashHex(initScript), "prelude "+hashHex(prelude), "modules "+mods.String())
	return b, nil
}

// addSetEncpolicy builds guest/set_encpolicy.c with the host's C compiler
// (static, so that it needs no library in the guest), cached in cacheDir
// by the source's hash, and puts it before the guest's xfs_io behind
// guest/xfs_io.sh. Without a C compiler the guest keeps the plain xfs_io,
// and a script that sets a policy with -s fails there with xfs_io's
// usage message, as on any host with an old xfsprogs.
func (h *Host) addSetEncpolicy(ctx context.Context, b *builder, cacheDir string) error {
	xfsIo := h.Tools["xfs_io"]
	cc := h.CC
	if xfsIo == "" || cc == "" {
		return nil
	}
	dir := cacheDir
	if dir == "" {
		d, err := os.MkdirTemp("", "vfslab-linux-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sum := hashHex(setEncpolicySource)
	bin := filepath.Join(dir, "set_encpolicy-"+sum[:16])
	if !fileExists(bin) {
		src := bin + ".c"
		if err := os.WriteFile(src, setEncpolicySource, 0o644); err != nil {
			return err
		}
		defer os.Remove(src)
		tmp := bin + ".tmp"
		out, err := exec.CommandContext(ctx, cc, "-static", "-O2", "-o", tmp, src).CombinedOutput()
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("linux: building the guest's set_encpolicy with %s: %v: %s", cc, err, bytes.TrimSpace(out))
		}
		if err := os.Rename(tmp, bin); err != nil {
			return err
		}
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	// The real xfs_io moves to /usr/lib/vfslab; its libraries stay.
	gp := strings.Trim(guestPath(xfsIo), "/")
	real, ok := b.t[gp]
	if !ok || real.mode&0o170000 != modeRegular {
		return nil
	}
	b.t.parent("usr/lib/vfslab/x")
	b.t["usr/lib/vfslab/xfs_io"] = real
	b.t.file("usr/lib/vfslab/set_encpolicy", 0o755, data)
	b.t.file(gp, 0o755, xfsIoWrapper)
	b.inputs = append(b.inputs, "set_encpolicy "+sum, "xfs_io wrapper "+hashHex(xfsIoWrapper))
	return nil
}

// depmod indexes the carried modules (modules.dep, modules.alias, ...)
// and adds the indexes to the tree.
func (h *Host) depmod(ctx context.Context, b *builder, stage string) error {
	mdir := filepath.Join("usr/lib/modules", h.Release)
	for p, e := range b.t {
		if !strings.HasPrefix(p, mdir+"/") || e.hostPath == "" {
			continue
		}
		dst := filepath.Join(stage, p)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if !e.unxz {
			if err := os.Symlink(e.hostPath, dst); err != nil {
				return err
			}
			continue
		}
		data, err := h.readEntry(e)
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Depmod, "-b", filepath.Join(stage, "usr"), h.Release)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("linux: depmod: %v: %s", err, bytes.TrimSpace(out))
	}
	idx, err := filepath.Glob(filepath.Join(stage, mdir, "modules.*"))
	if err != nil {
		return err
	}
	for _, p := range idx {
		rel, _ := filepath.Rel(stage, p)
		if e, ok := b.t[rel]; ok && e.hostPath != "" {
			continue // copied from the host (modules.builtin, modules.order)
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b.t.file(rel, 0o644, data)
	}
	return nil
}

// readEntry reads a host-backed entry's contents.
func (h *Host) readEntry(e *entry) ([]byte, error) {
	if !e.unxz {
		return os.ReadFile(e.hostPath)
	}
	out, err := exec.Command(h.Tools["xz"], "-dc", e.hostPath).Output()
	if err != nil {
		return nil, fmt.Errorf("linux: xz -dc %s: %v", e.hostPath, err)
	}
	return out, nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}
