package ext4_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/internal/fstestutil"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// The tests in this file check the journal as the model writes it: the
// superblock's needs_recovery while mounted, and the images a crash
// leaves at each write ext4 submits (LogWrites), replayed by the model
// and by e2fsck.

// mountAt boots a machine whose root is a growing ext4 and mounts the
// image on dev at /mnt.
func mountAt(t testing.TB, dev *vfs.BlockDevice, comm string) (*fstestutil.Env, *vfs.System) {
	t.Helper()
	var sys *vfs.System
	e := fstestutil.Boot(t, comm, func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
		s, p, err := ext4.Boot(tk, vfs.Config{}, nil)
		sys = s
		return s, p, err
	})
	e.Must(e.P.Mkdir(e.T, "/mnt", 0o755))
	if _, err := sys.Mount(e.T, e.P, ext4.Type, "/mnt", vfs.MountOptions{Device: dev, Source: "vdb", ReadOnly: dev.ReadOnly()}); err != nil {
		t.Fatalf("mount: %v", err)
	}
	return e, sys
}

func devSuper(t testing.TB, dev *vfs.BlockDevice) ext4.RawSuper {
	t.Helper()
	var s ext4.RawSuper
	if _, err := dev.ReadAt(s[:], 1024); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestImageNeedsRecovery: a read-write mount of an image with a journal
// sets needs_recovery in the superblock on the device (ext4_setup_super),
// a sync leaves it set with the transaction in the log, a clean umount
// clears it (ext4_put_super) with the log empty, and a new mount of the
// detached superblock sets it again; the images while mounted and after
// umount are clean for e2fsck -fn, and their journal superblocks are
// what Linux 6.12 leaves for the same steps (when e2fsprogs are
// installed).
func TestImageNeedsRecovery(t *testing.T) {
	dev := vfs.NewBlockDeviceSize(16 << 20 / vfs.PageSize)
	tk := kernel.New().NewTask("mkfs")
	if err := ext4.Type.Mkfs(tk, dev, nil); err != nil {
		t.Fatal(err)
	}
	tk.Exit()
	if s := devSuper(t, dev); s.Incompat()&ext4.IncompatRecover != 0 {
		t.Fatal("needs_recovery set by mkfs")
	}
	s0 := devSuper(t, dev)
	mnt0 := binary.LittleEndian.Uint16(s0[0x34:])
	var writes []ext4.BlockWrite
	ext4.LogWrites(dev, func(w ext4.BlockWrite) { writes = append(writes, w) })
	defer ext4.LogWrites(dev, nil)
	e, sys := mountAt(t, dev, "ext4-recover")
	s := devSuper(t, dev)
	if s.Incompat()&ext4.IncompatRecover == 0 {
		t.Fatal("needs_recovery not set while mounted read-write")
	}
	if n := binary.LittleEndian.Uint16(s[0x34:]); n != mnt0+1 {
		t.Errorf("s_mnt_count %d after a mount, was %d", n, mnt0)
	}
	if len(writes) != 1 || writes[0].Off != 1024 || len(writes[0].Data) != 1024 || writes[0].Flags&ext4.ReqFUA == 0 {
		t.Fatalf("the mount wrote %d blocks, want the superblock alone with REQ_FUA", len(writes))
	}
	e.Must(e.P.Mkdir(e.T, "/mnt/d", 0o755))
	e.Write("/mnt/d/f", strings.Repeat("j", 3000))
	e.Must(sys.Sync(e.T))
	if s := devSuper(t, dev); s.Incompat()&ext4.IncompatRecover == 0 {
		t.Fatal("needs_recovery cleared by sync")
	}
	commits := 0
	for _, w := range writes {
		if len(w.Data) >= 8 && binary.BigEndian.Uint32(w.Data) == 0xC03B3998 && binary.BigEndian.Uint32(w.Data[4:]) == 2 {
			commits++
			if w.Flags&(ext4.ReqPreflush|ext4.ReqFUA) != ext4.ReqPreflush|ext4.ReqFUA {
				t.Error("commit block without REQ_PREFLUSH|REQ_FUA")
			}
		}
	}
	if commits != 1 {
		t.Fatalf("sync wrote %d commit blocks, want 1", commits)
	}
	_, fsckErr := exec.LookPath(tool("e2fsck"))
	if fsckErr == nil {
		// After the sync, the log holds transaction 2 from block 1, as
		// Linux 6.12 leaves it (mke2fs's s_sequence is 1).
		mounted := filepath.Join(t.TempDir(), "mounted")
		e.Must(dev.SaveImage(mounted))
		e2fsckClean(t, mounted)
		h := runTool(t, "dumpe2fs", "-h", mounted)
		for _, want := range []string{`needs_recovery`, `Journal sequence:\s+0x00000002\n`, `Journal start:\s+1\n`} {
			if !regexp.MustCompile(want).MatchString(h) {
				t.Errorf("mounted, after a sync: dumpe2fs -h lacks %q:\n%s", want, h)
			}
		}
	}
	vsb, err := sys.Umount(e.T, e.P, "/mnt")
	if err != nil {
		t.Fatal(err)
	}
	if s := devSuper(t, dev); s.Incompat()&ext4.IncompatRecover != 0 {
		t.Fatal("needs_recovery still set after umount")
	}
	img := filepath.Join(t.TempDir(), "img")
	e.Must(dev.SaveImage(img))
	if fsckErr == nil {
		// After umount: jbd2_journal_destroy's j_tail_sequence past
		// the next transaction, the log empty (Linux: sequence 4).
		e2fsckClean(t, img)
		h := runTool(t, "dumpe2fs", "-h", img)
		for _, want := range []string{`Journal features:\s+journal_64bit journal_checksum_v3\n`, `Journal start:\s+0\n`, `Journal sequence:\s+0x00000004\n`, `Journal checksum type:\s+crc32c\n`} {
			if !regexp.MustCompile(want).MatchString(h) {
				t.Errorf("dumpe2fs -h lacks %q:\n%s", want, h)
			}
		}
	}
	if _, err := sys.MountSuper(e.T, e.P, vsb, "/mnt"); err != nil {
		t.Fatal(err)
	}
	if s := devSuper(t, dev); s.Incompat()&ext4.IncompatRecover == 0 {
		t.Fatal("needs_recovery not set by a second mount")
	}
	if got, err := e.Read("/mnt/d/f"); err != nil || len(got) != 3000 {
		t.Fatalf("after a second mount: %d bytes, %v", len(got), err)
	}
}

// crashStep is one step of the crash workload; sync steps end a
// transaction.
type crashStep struct {
	name string
	do   func(e *fstestutil.Env, sys *vfs.System)
}

// tree is what a crash check compares: each path under /mnt with its
// type, size and contents' hash (lost+found left out).
func tree(e *fstestutil.Env, root string) string {
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		for _, n := range e.List(dir) {
			if n == "." || n == ".." || (dir == root && n == "lost+found") {
				continue
			}
			p := dir + "/" + n
			st, err := e.P.Lstat(e.T, p)
			if err != nil {
				out = append(out, fmt.Sprintf("%s: %v", p, err))
				continue
			}
			switch st.Mode & vfs.S_IFMT {
			case vfs.S_IFLNK:
				buf := make([]byte, 4096)
				n, err := e.P.Readlink(e.T, p, buf)
				out = append(out, fmt.Sprintf("%s -> %q %v", p, buf[:max(n, 0)], err))
			case vfs.S_IFDIR:
				out = append(out, fmt.Sprintf("%s/ nlink=%d", p, st.Nlink))
				walk(p)
			default:
				data, err := e.Read(p)
				out = append(out, fmt.Sprintf("%s %o size=%d nlink=%d %x %v", p, st.Mode, st.Size, st.Nlink, sha256.Sum256([]byte(data)), err))
			}
		}
	}
	walk(root)
	sort.Strings(out)
	return strings.Join(out, "\n")
}

var crashKey = bytes.Repeat([]byte{0x5c}, 64)

// escapedTarget is a symlink target too long for the inode whose first
// bytes are the jbd2 magic.
var escapedTarget = "\xc0\x3b\x39\x98" + strings.Repeat("t", 90)

// addKey adds the workload's key to the filesystem at /mnt.
func addKey(e *fstestutil.Env) {
	fd, err := e.P.Open(e.T, "/mnt", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	_, err = e.P.AddEncryptionKey(e.T, fd, crashKey)
	e.Must(err)
	e.Must(e.P.Close(e.T, fd))
}

func isCommit(w ext4.BlockWrite) bool {
	return len(w.Data) >= 8 && binary.BigEndian.Uint32(w.Data) == 0xC03B3998 && binary.BigEndian.Uint32(w.Data[4:]) == 2
}

// TestImageCrashPoints runs a small workload (mkdir, create, write,
// rename, unlink; with and without an encrypted directory) on an image
// with a sync after each step, records every write ext4 submits, and
// takes the image a crash leaves after a prefix of them: replayed by the
// model at mount, each must read as the workload's state after the last
// transaction whose commit block is in the prefix, and be clean for
// e2fsck -fn after umount; e2fsck -fy (when installed) must replay the
// same image to the same state. Each point just after a commit block is
// checked again with that block's checksum broken (a torn commit), which
// must give the state before it. The writes, applied in order to the
// image before the mount, must give the image after umount. Block sizes
// 1 and 4 KiB. The default run checks the points around each commit
// block and two others, e2fsck's replay just after the commits (-short:
// the first two commits); VFSLAB_CRASH_ALL=1 checks every point, each
// with e2fsck's replay.
func TestImageCrashPoints(t *testing.T) {
	for _, bs := range []int{1024, 4096} {
		for _, enc := range []bool{false, true} {
			t.Run(fmt.Sprintf("bs=%d/encrypt=%v", bs, enc), func(t *testing.T) { testCrashPoints(t, bs, enc) })
		}
	}
}

func testCrashPoints(t *testing.T, bs int, enc bool) {
	dev, base := crashDevice(t, "-O", "encrypt", "-b", fmt.Sprint(bs))
	var writes []ext4.BlockWrite
	ext4.LogWrites(dev, func(w ext4.BlockWrite) { writes = append(writes, w) })
	defer ext4.LogWrites(dev, nil)
	e, sys := mountAt(t, dev, "ext4-crash")
	if enc {
		e.Must(e.P.Mkdir(e.T, "/mnt/e", 0o700))
		if _, err := e.P.EncryptDir(e.T, "/mnt/e", crashKey, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	dir := "/mnt/a"
	if enc {
		dir = "/mnt/e/a"
	}
	big := strings.Repeat("crash point data ", 700) // 11900 bytes: several blocks
	steps := []crashStep{
		{"mkdir", func(e *fstestutil.Env, _ *vfs.System) { e.Must(e.P.Mkdir(e.T, dir, 0o755)) }},
		{"create+write", func(e *fstestutil.Env, _ *vfs.System) {
			e.Write(dir+"/f", big)
			e.Write(dir+"/small", "s")
		}},
		{"rename", func(e *fstestutil.Env, _ *vfs.System) {
			e.Must(e.P.Rename(e.T, dir+"/f", dir+"/g", 0))
			e.Must(e.P.Mkdir(e.T, dir+"/sub", 0o700))
		}},
		{"unlink", func(e *fstestutil.Env, _ *vfs.System) {
			e.Must(e.P.Unlink(e.T, dir+"/small"))
			e.Write(dir+"/sub/h", strings.Repeat("h", 5000))
		}},
		{"unlink big", func(e *fstestutil.Env, _ *vfs.System) { e.Must(e.P.Unlink(e.T, dir+"/g")) }},
		// A slow symlink whose block begins with the jbd2 magic: its
		// logged copy is escaped.
		{"symlink", func(e *fstestutil.Env, _ *vfs.System) {
			e.Must(e.P.Symlink(e.T, escapedTarget, "/mnt/lnk"))
		}},
		// The directory's block is freed: a revoke record.
		{"rmdir", func(e *fstestutil.Env, _ *vfs.System) {
			e.Must(e.P.Unlink(e.T, dir+"/sub/h"))
			e.Must(e.P.Rmdir(e.T, dir+"/sub"))
		}},
	}
	// states[c] is the tree after c commits.
	states := map[int]string{0: ""}
	commitsIn := func(ws []ext4.BlockWrite) int {
		n := 0
		for _, w := range ws {
			if isCommit(w) {
				n++
			}
		}
		return n
	}
	e.Must(sys.Sync(e.T))
	states[commitsIn(writes)] = tree(e, "/mnt")
	for _, s := range steps {
		s.do(e, sys)
		e.Must(sys.Sync(e.T))
		c := commitsIn(writes)
		if _, ok := states[c]; ok {
			t.Fatalf("step %s committed no transaction", s.name)
		}
		states[c] = tree(e, "/mnt")
	}
	last := tree(e, "/mnt")
	if _, err := sys.Umount(e.T, e.P, "/mnt"); err != nil {
		t.Fatal(err)
	}
	if c := commitsIn(writes); states[c] == "" && c > 0 {
		states[c] = last
	}
	var revokes, escapes int
	for _, w := range writes {
		if len(w.Data) < 12 || binary.BigEndian.Uint32(w.Data) != 0xC03B3998 {
			continue
		}
		switch binary.BigEndian.Uint32(w.Data[4:]) {
		case 5:
			revokes++
		case 1: // csum v3 tags: 16 bytes, flags at 4, the UUID after the first
			for off := 12; off+16 <= len(w.Data); {
				fl := binary.BigEndian.Uint32(w.Data[off+4:])
				if fl&1 != 0 {
					escapes++
				}
				off += 16
				if fl&2 == 0 {
					off += 16
				}
				if fl&8 != 0 {
					break
				}
			}
		}
	}
	if revokes == 0 || escapes == 0 {
		t.Errorf("the workload wrote %d revoke blocks and %d escaped tags, want some of each", revokes, escapes)
	}
	// The log of writes is the whole story: replayed on the image before
	// the mount, it gives the image after umount.
	final := new(bytes.Buffer)
	if _, err := dev.WriteTo(final); err != nil {
		t.Fatal(err)
	}
	all := crashImage(base, writes)
	if !bytes.Equal(all, final.Bytes()) {
		n := 0
		for i := 0; i < len(all); i += 1024 {
			if !bytes.Equal(all[i:i+1024], final.Bytes()[i:i+1024]) {
				if n < 5 {
					t.Errorf("1 KiB block %d differs from the device", i/1024)
				}
				n++
			}
		}
		t.Fatalf("the writes replayed give another image than the device's (%d 1 KiB blocks differ)", n)
	}
	// The points: before and after each commit block, and a sample.
	pts := map[int]bool{0: true, len(writes): true}
	rng := rand.New(rand.NewSource(int64(len(writes))))
	for i, w := range writes {
		if isCommit(w) {
			pts[i], pts[i+1] = true, true
		}
	}
	if os.Getenv("VFSLAB_CRASH_ALL") != "" {
		for i := 0; i <= len(writes); i++ {
			pts[i] = true
		}
	} else {
		for k := 0; k < 2; k++ {
			pts[rng.Intn(len(writes)+1)] = true
		}
	}
	var order []int
	for p := range pts {
		order = append(order, p)
	}
	sort.Ints(order)
	if testing.Short() {
		// The points just after each of the first two commits, and the
		// end.
		order = order[:0]
		n := 0
		for i, w := range writes {
			if isCommit(w) && n < 2 {
				order = append(order, i, i+1)
				n++
			}
		}
		order = append(order, len(writes))
	}
	_, e2fsckErr := exec.LookPath(tool("e2fsck"))
	haveE2fsck := e2fsckErr == nil
	torn := 0
	everything := os.Getenv("VFSLAB_CRASH_ALL") != ""
	for _, k := range order {
		img := crashImage(base, writes[:k])
		c := commitsIn(writes[:k])
		want, ok := states[c]
		if !ok {
			t.Fatalf("crash after %d writes: %d commits, no state recorded for it", k, c)
		}
		afterCommit := k > 0 && isCommit(writes[k-1])
		// e2fsck's own replay at every point in the long run; at the
		// points just after a commit and at the end by default.
		withFsck := everything || afterCommit || k == len(writes)
		checkCrash(t, fmt.Sprintf("crash after %d of %d writes (%d commits)", k, len(writes), c), img, enc, want, haveE2fsck, withFsck)
		if afterCommit {
			// The same crash with the commit block's checksum wrong
			// (a torn commit): its transaction is not replayed.
			bad := append([]byte(nil), img...)
			bad[writes[k-1].Off+0x10] ^= 0xFF
			checkCrash(t, fmt.Sprintf("crash after %d writes, the last commit block's checksum broken", k), bad, enc, states[c-1], haveE2fsck, everything)
			torn++
		}
	}
	t.Logf("%d writes, %d commits, %d crash points checked, %d of them with a torn commit too (e2fsck: %v)", len(writes), commitsIn(writes), len(order), torn, haveE2fsck)
}

// checkCrash replays the crash image img in the model, which must read
// as want and, after umount, be clean for e2fsck -fn; and, with
// e2fsReplay, with e2fsck -fy, after which it must be clean and read as
// want too.
func checkCrash(t *testing.T, what string, img []byte, enc bool, want string, haveE2fsck, e2fsReplay bool) {
	t.Helper()
	got, out := replayTree(t, img, enc)
	if got != want {
		t.Errorf("%s: the model's replay reads\n%s\nwant\n%s", what, got, want)
		return
	}
	if !haveE2fsck {
		return
	}
	if o, err := exec.Command(tool("e2fsck"), "-fn", out).CombinedOutput(); err != nil {
		t.Errorf("%s: e2fsck -fn after the model's replay: %v\n%s", what, err, o)
	}
	if !e2fsReplay {
		return
	}
	ref := filepath.Join(t.TempDir(), "ref.img")
	if err := os.WriteFile(ref, img, 0o644); err != nil {
		t.Fatal(err)
	}
	if o, err := exec.Command(tool("e2fsck"), "-fy", ref).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			t.Errorf("%s: e2fsck -fy: %v\n%s", what, err, o)
			return
		}
	}
	if o, err := exec.Command(tool("e2fsck"), "-fn", ref).CombinedOutput(); err != nil {
		t.Errorf("%s: e2fsck -fn after e2fsck's replay: %v\n%s", what, err, o)
	}
	raw, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := replayDiff(mine, raw); diff != "" {
		t.Errorf("%s: the model's replay and e2fsck's differ: %s", what, diff)
	}
	if got, _ := replayTree(t, raw, enc); got != want {
		t.Errorf("%s: after e2fsck's replay the image reads\n%s\nwant\n%s", what, got, want)
	}
}

// replayDiff compares two replays of a crash image block by block, but
// for the superblock's block and the journal superblock, which the two
// leave differently (mount count, times, the journal's sequence), and the
// group descriptors' bg_itable_unused and checksum, which e2fsck -fy
// recomputes where the kernel leaves them: "" when every other byte is
// the same.
func replayDiff(a, b []byte) string {
	var s ext4.RawSuper
	copy(s[:], a[1024:2048])
	bs := s.BlockSize()
	sbBlock := 1024 / bs
	gdt := sbBlock + 1
	gdtEnd := gdt + (int(s.GroupsCount())*s.DescSize()+bs-1)/bs
	var bad []int
	for off := 0; off+bs <= len(a) && off+bs <= len(b); off += bs {
		x, y := a[off:off+bs], b[off:off+bs]
		if off/bs == sbBlock || bytes.Equal(x, y) {
			continue
		}
		if blk := off / bs; blk >= gdt && blk < gdtEnd {
			x, y = append([]byte(nil), x...), append([]byte(nil), y...)
			for d := 0; d+s.DescSize() <= bs; d += s.DescSize() {
				for _, f := range [][2]int{{0x1C, 2}, {0x1E, 2}, {0x32, 2}} {
					if f[0]+f[1] <= s.DescSize() {
						clear(x[d+f[0] : d+f[0]+f[1]])
						clear(y[d+f[0] : d+f[0]+f[1]])
					}
				}
			}
			if bytes.Equal(x, y) {
				continue
			}
		}
		if binary.BigEndian.Uint32(x) == 0xC03B3998 && binary.BigEndian.Uint32(x[4:]) == 4 {
			continue
		}
		bad = append(bad, off/bs)
	}
	if len(bad) == 0 {
		return ""
	}
	return fmt.Sprintf("%d blocks (first %v)", len(bad), bad[:min(len(bad), 8)])
}

// crashDevice is an 8 MiB device formatted by mkfs.ext4 with args, and
// its image as mkfs left it: the base the crash images replay writes on.
func crashDevice(t *testing.T, args ...string) (*vfs.BlockDevice, []byte) {
	t.Helper()
	dev := vfs.NewBlockDeviceSize(8 << 20 / vfs.PageSize)
	tk := kernel.New().NewTask("mkfs")
	if err := ext4.Type.Mkfs(tk, dev, args); err != nil {
		t.Fatal(err)
	}
	tk.Exit()
	var base bytes.Buffer
	if _, err := dev.WriteTo(&base); err != nil {
		t.Fatal(err)
	}
	return dev, base.Bytes()
}

// crashImage is base with the writes applied in order.
func crashImage(base []byte, ws []ext4.BlockWrite) []byte {
	img := append([]byte(nil), base...)
	for _, w := range ws {
		copy(img[w.Off:], w.Data)
	}
	return img
}

// replayTree mounts a copy of img on a new machine (the model's journal
// replay when it needs one), reads the tree with the key added, unmounts
// it and returns the tree and the path of the image as the umount left
// it.
func replayTree(t *testing.T, img []byte, enc bool) (string, string) {
	t.Helper()
	dev := vfs.NewBlockDeviceSize(uint32(len(img) / vfs.PageSize))
	if _, err := dev.WriteAt(img, 0); err != nil {
		t.Fatal(err)
	}
	e, sys := mountAt(t, dev, "ext4-replay")
	if enc {
		addKey(e)
	}
	got := tree(e, "/mnt")
	if _, err := sys.Umount(e.T, e.P, "/mnt"); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "replayed.img")
	e.Must(dev.SaveImage(out))
	return got, out
}

// BenchmarkImageSyncCommit measures a sync after one small file on a
// 64 MiB image: the commit finds the dirty blocks by hashing every block
// (jbd2.go), then logs and checkpoints a handful.
func BenchmarkImageSyncCommit(b *testing.B) {
	dev := vfs.NewBlockDeviceSize(64 << 20 / vfs.PageSize)
	tk := kernel.New().NewTask("mkfs")
	if err := ext4.Type.Mkfs(tk, dev, nil); err != nil {
		b.Fatal(err)
	}
	tk.Exit()
	e, sys := mountAt(b, dev, "ext4-bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Write(fmt.Sprintf("/mnt/f%d", i%64), "bench")
		e.Must(sys.Sync(e.T))
	}
}

// TestImageCrashLogWraps: enough transactions (a file and a sync each) to
// go round the log: the tail moves as transactions free a quarter of it,
// the log wraps from its end to s_first, and the crash points around the
// last commits replay, in the model and in e2fsck, to the state after the
// last committed transaction.
func TestImageCrashLogWraps(t *testing.T) {
	if testing.Short() {
		t.Skip("160 transactions")
	}
	dev, base := crashDevice(t)
	var writes []ext4.BlockWrite
	ext4.LogWrites(dev, func(w ext4.BlockWrite) { writes = append(writes, w) })
	defer ext4.LogWrites(dev, nil)
	e, sys := mountAt(t, dev, "ext4-wrap")
	states := map[int]string{0: ""}
	commits := 0
	for i := 0; i < 160; i++ {
		e.Write(fmt.Sprintf("/mnt/f%02d", i), strings.Repeat(fmt.Sprint(i%10), 700))
		if i%7 == 6 {
			e.Must(e.P.Unlink(e.T, fmt.Sprintf("/mnt/f%02d", i-3)))
		}
		e.Must(sys.Sync(e.T))
		commits = 0
		for _, w := range writes {
			if isCommit(w) {
				commits++
			}
		}
		states[commits] = tree(e, "/mnt")
	}
	if _, err := sys.Umount(e.T, e.P, "/mnt"); err != nil {
		t.Fatal(err)
	}
	final := new(bytes.Buffer)
	if _, err := dev.WriteTo(final); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(crashImage(base, writes), final.Bytes()) {
		t.Fatal("the writes replayed give another image than the device's")
	}
	// The log's blocks: descriptors and commits; a wrap is a log write
	// below the one before it; a tail move is a journal superblock write
	// with s_start neither 0 nor the first block of the log.
	var last int64 = -1
	wraps, tailMoves := 0, 0
	var commitAt []int     // write index of each commit block
	near := map[int]bool{} // commits (by number) next to a wrap or a tail move
	for i, w := range writes {
		if len(w.Data) < 12 || binary.BigEndian.Uint32(w.Data) != 0xC03B3998 {
			continue
		}
		switch binary.BigEndian.Uint32(w.Data[4:]) {
		case 1, 2:
			if w.Off < last {
				wraps++
				near[len(commitAt)], near[len(commitAt)+1] = true, true
			}
			last = w.Off
			if isCommit(w) {
				commitAt = append(commitAt, i)
			}
		case 4:
			if s := binary.BigEndian.Uint32(w.Data[0x1C:]); s > 1 {
				tailMoves++
				near[len(commitAt)-1], near[len(commitAt)] = true, true
			}
		}
	}
	for c := len(commitAt) - 4; c < len(commitAt); c++ {
		near[c] = true
	}
	if wraps == 0 || tailMoves == 0 {
		t.Fatalf("%d transactions: %d wraps of the log, %d tail moves; want both", commits, wraps, tailMoves)
	}
	_, e2fsckErr := exec.LookPath(tool("e2fsck"))
	checked := 0
	for c := range near {
		if c < 0 || c >= len(commitAt) {
			continue
		}
		// Just before commit block c (c commits done) and just after.
		i := commitAt[c]
		for _, k := range []int{i, i + 1} {
			img := crashImage(base, writes[:k])
			done := c + k - i
			checkCrash(t, fmt.Sprintf("crash after %d of %d writes (%d commits)", k, len(writes), done), img, false, states[done], e2fsckErr == nil, k == i+1)
			checked++
		}
	}
	t.Logf("%d writes, %d commits, %d wraps of the log, %d tail moves, %d crash points checked", len(writes), commits, wraps, tailMoves, checked)
}

// TestImageNoJournalState: a read-write mount without a journal (here
// noload) clears EXT4_VALID_FS in s_state while mounted and sets no
// needs_recovery; umount puts the state back.
func TestImageNoJournalState(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
	}{{"noload", "noload"}} {
		t.Run(c.name, func(t *testing.T) {
			dev := vfs.NewBlockDeviceSize(8 << 20 / vfs.PageSize)
			tk := kernel.New().NewTask("mkfs")
			if err := ext4.Type.Mkfs(tk, dev, nil); err != nil {
				t.Fatal(err)
			}
			tk.Exit()
			if s := devSuper(t, dev); s.State()&ext4.ValidFS == 0 {
				t.Fatal("mkfs left the state not valid")
			}
			var sys *vfs.System
			e := fstestutil.Boot(t, "ext4-nojournal", func(tk *kernel.Task) (*vfs.System, *vfs.Proc, error) {
				s, p, err := ext4.Boot(tk, vfs.Config{}, nil)
				sys = s
				return s, p, err
			})
			e.Must(e.P.Mkdir(e.T, "/mnt", 0o755))
			if _, err := sys.Mount(e.T, e.P, ext4.Type, "/mnt", vfs.MountOptions{Device: dev, Source: "vdb", Data: c.data}); err != nil {
				t.Fatal(err)
			}
			s := devSuper(t, dev)
			if s.State()&ext4.ValidFS != 0 || s.Incompat()&ext4.IncompatRecover != 0 {
				t.Fatalf("mounted without a journal: state %#x, incompat %#x; want the state not valid and no needs_recovery", s.State(), s.Incompat())
			}
			e.Must(e.P.Mkdir(e.T, "/mnt/d", 0o755))
			if _, err := sys.Umount(e.T, e.P, "/mnt"); err != nil {
				t.Fatal(err)
			}
			if s := devSuper(t, dev); s.State()&ext4.ValidFS == 0 {
				t.Fatalf("after umount: state %#x, want valid", s.State())
			}
		})
	}
}
