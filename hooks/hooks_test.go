package hooks_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/hooks"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// nokeyName returns the listed (no-key) name of the n-th entry of dir.
func (e *env) listing(dir string) []string {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, dir, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	buf := make([]byte, 8192)
	n, err := e.p.Getdents64(e.t, fd, buf)
	e.must(err)
	ds, err := vfs.ParseDirents(buf[:n])
	e.must(err)
	var out []string
	for _, d := range ds[2:] {
		out = append(out, d.Name)
	}
	return out
}

// openCase is one fscrypt_file_open scenario: setup builds the state and
// returns the path to open; want is the kernel's answer.
type openCase struct {
	name  string
	setup func(e *env) string
	want  error
}

var openCases = []openCase{
	{"unencrypted parent, unencrypted file", func(e *env) string {
		e.mkdir("/u")
		e.create("/u/f", "x")
		return "/u/f"
	}, nil},
	{"unencrypted parent, encrypted file", func(e *env) string {
		e.mkdir("/u")
		e.mkdir("/e")
		e.encrypt("/e", 1)
		e.create("/e/f", "x")
		e.must(e.p.Rename(e.t, "/e/f", "/u/f", 0))
		return "/u/f"
	}, nil},
	{"encrypted parent, same policy", func(e *env) string {
		e.mkdir("/e")
		e.encrypt("/e", 1)
		e.create("/e/f", "x")
		return "/e/f"
	}, nil},
	{"encrypted parent, unencrypted file (offline edit)", func(e *env) string {
		e.mkdir("/e")
		e.encrypt("/e", 1)
		e.create("/e/f", "x")
		memfs.UnsafeSetContext(e.t, e.inode("/e/f"), nil)
		return "/e/f"
	}, errno.EPERM},
	{"encrypted parent, file with another policy", func(e *env) string {
		e.mkdir("/e")
		e.mkdir("/e2")
		e.encrypt("/e", 1)
		e.encrypt("/e2", 2)
		e.create("/e/f", "x")
		memfs.UnsafeSetContext(e.t, e.inode("/e/f"), contextFor(e.policyOf("/e2"), 7))
		return "/e/f"
	}, errno.EPERM},
	{"encrypted file without its key", func(e *env) string {
		e.mkdir("/e")
		id := e.encrypt("/e", 1)
		e.create("/e/f", "x")
		e.removeKey(id)
		return "/e/" + e.listing("/e")[0]
	}, errno.ENOKEY},
	{"keyless encrypted parent, unencrypted file", func(e *env) string {
		e.mkdir("/e")
		id := e.encrypt("/e", 1)
		e.create("/e/f", "x")
		memfs.UnsafeSetContext(e.t, e.inode("/e/f"), nil)
		e.removeKey(id)
		return "/e/" + e.listing("/e")[0]
	}, errno.EPERM},
	{"keyless encrypted parent, file with another key", func(e *env) string {
		e.mkdir("/e")
		e.mkdir("/e2")
		id := e.encrypt("/e", 1)
		e.encrypt("/e2", 2)
		e.create("/e/f", "x")
		memfs.UnsafeSetContext(e.t, e.inode("/e/f"), contextFor(e.policyOf("/e2"), 7))
		e.removeKey(id)
		return "/e/" + e.listing("/e")[0]
	}, errno.EPERM},
}

// TestFileOpenCases runs every scenario under every variant: each gives
// the kernel's answer, the EPERM ones log the warning naming the parent,
// and the variants agree.
func TestFileOpenCases(t *testing.T) {
	for _, c := range openCases {
		t.Run(c.name, func(t *testing.T) {
			got := map[string]string{}
			for _, v := range variants {
				e := newEnv(t, v, nil)
				path := c.setup(e)
				err := e.openClose(path)
				warned := e.k.Log.Contains("Inconsistent encryption context (parent directory: ")
				got[v] = fmt.Sprintf("%s warned=%v", errString(err), warned)
				if err != c.want {
					t.Errorf("%s: open(%q) = %v, want %v", v, path, err, c.want)
				}
				if warned != (c.want == errno.EPERM) {
					t.Errorf("%s: warning logged = %v; log:\n%s", v, warned, strings.Join(e.k.Log.Lines(), "\n"))
				}
				if n := e.k.Bugs.Len(); n != 0 {
					t.Errorf("%s: BUGs %v", v, e.k.Bugs.All())
				}
			}
			want := map[string]string{}
			for _, v := range variants {
				want[v] = got["base"]
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("variants disagree (-base +variant):\n%s", d)
			}
		})
	}
}

// TestFileOpenWarningNamesParent checks the warning's exact text.
func TestFileOpenWarningNamesParent(t *testing.T) {
	e := newEnv(t, "v2", nil)
	c := openCases[3]
	path := c.setup(e)
	if err := e.openClose(path); err != errno.EPERM {
		t.Fatal(err)
	}
	want := fmt.Sprintf("fscrypt (memfs, inode %d): Inconsistent encryption context (parent directory: %d)",
		e.inode(path).Ino(), e.inode("/e").Ino())
	if !e.k.Log.Contains(want) {
		t.Fatalf("log lacks %q:\n%s", want, strings.Join(e.k.Log.Lines(), "\n"))
	}
}

// TestFileOpenFastPathEvents checks which path each variant takes.
func TestFileOpenFastPathEvents(t *testing.T) {
	for _, v := range variants {
		for _, enc := range []bool{false, true} {
			e := newEnv(t, v, nil)
			e.mkdir("/d")
			if enc {
				e.encrypt("/d", 1)
			}
			e.create("/d/f", "x")
			before := e.t.Ev.Clone()
			e.must(e.openClose("/d/f"))
			d := e.t.Ev.Sub(before)
			fast, slow := d.Get(hooks.EvFileOpenFast), d.Get(hooks.EvFileOpenDgetParent)
			wantFast := uint64(0)
			if v != "base" && !enc {
				wantFast = 1
			}
			if fast != wantFast || fast+slow != 1 {
				t.Errorf("%s encrypted=%v: fast=%d dget_parent=%d", v, enc, fast, slow)
			}
		}
	}
}

func TestPrepareCreateNeedsKey(t *testing.T) {
	e := newEnv(t, "base", nil)
	e.mkdir("/e")
	id := e.encrypt("/e", 1)
	e.create("/e/f", "x")
	e.removeKey(id)
	if _, err := e.p.Open(e.t, "/e/new", vfs.O_CREAT|vfs.O_WRONLY, 0o644); err != errno.ENOKEY {
		t.Errorf("creat: %v", err)
	}
	if err := e.p.Mkdir(e.t, "/e/newdir", 0o755); err != errno.ENOKEY {
		t.Errorf("mkdir: %v", err)
	}
	if err := e.p.Symlink(e.t, "target", "/e/newlink"); err != errno.ENOKEY {
		t.Errorf("symlink: %v", err)
	}
	if err := e.p.Truncate(e.t, "/e/"+e.listing("/e")[0], 0); err != errno.ENOKEY {
		t.Errorf("truncate: %v", err)
	}
	// Deleting works without the key.
	if err := e.p.Unlink(e.t, "/e/"+e.listing("/e")[0]); err != nil {
		t.Errorf("unlink by no-key name: %v", err)
	}
	if got := e.listing("/e"); len(got) != 0 {
		t.Errorf("listing after unlink: %q", got)
	}
}

func TestPrepareLinkRules(t *testing.T) {
	e := newEnv(t, "base", nil)
	e.mkdir("/u")
	e.mkdir("/a")
	e.mkdir("/a2")
	e.mkdir("/b")
	e.mkdir("/k")
	e.encrypt("/a", 1)
	e.encrypt("/a2", 1)
	e.encrypt("/b", 2)
	kid := e.encrypt("/k", 3)
	e.create("/u/plain", "p")
	e.create("/a/f", "a")
	e.create("/k/f", "k")
	e.removeKey(kid)
	for _, c := range []struct {
		from, to string
		want     error
	}{
		{"/u/plain", "/a/plain", errno.EXDEV},    // unencrypted file into an encrypted dir
		{"/a/f", "/b/f", errno.EXDEV},            // another policy
		{"/a/f", "/a2/f", nil},                   // same policy, other dir
		{"/a/f", "/u/f", nil},                    // unencrypted dir: anything goes
		{"/u/plain", "/k/plain", errno.ENOKEY},   // keyless dir: the new name is a no-key name
		{"/u/plain", "/u/plain2", nil},           // no encryption at all
		{"/a/f", "/a/f-again", nil},              // same directory
		{"/a/nonexistent", "/a/x", errno.ENOENT}, // the VFS's checks come first
	} {
		if err := e.p.Link(e.t, c.from, c.to); err != c.want {
			t.Errorf("link(%s, %s) = %v, want %v", c.from, c.to, err, c.want)
		}
	}
}

func TestPrepareRenameRules(t *testing.T) {
	e := newEnv(t, "base", nil)
	for _, d := range []string{"/u", "/a", "/a2", "/b", "/k"} {
		e.mkdir(d)
	}
	e.encrypt("/a", 1)
	e.encrypt("/a2", 1)
	e.encrypt("/b", 2)
	kid := e.encrypt("/k", 3)
	e.create("/u/plain", "p")
	e.create("/u/plain2", "p")
	e.create("/a/f", "a")
	e.create("/a/g", "a")
	e.create("/a2/h", "a")
	e.create("/b/f", "b")
	e.create("/k/f", "k")
	e.removeKey(kid)
	nokey := "/k/" + e.listing("/k")[0]
	for _, c := range []struct {
		from, to string
		flags    uint32
		want     error
	}{
		{"/u/plain", "/a/plain", 0, errno.EXDEV},
		{"/a/f", "/b/f2", 0, errno.EXDEV},
		{"/a/f", "/b/f", vfs.RENAME_EXCHANGE, errno.EXDEV},
		{"/u/plain", "/a/f", vfs.RENAME_EXCHANGE, errno.EXDEV}, // plain may not enter /a
		{"/a/f", "/u/plain", vfs.RENAME_EXCHANGE, errno.EXDEV}, // both directions checked
		{nokey, "/k/renamed", 0, errno.ENOKEY},
		{"/u/plain", "/k/x", 0, errno.ENOKEY}, // the target is a no-key name
		{"/u/plain2", nokey, vfs.RENAME_EXCHANGE, errno.ENOKEY},
		{"/a/g", "/a/g2", 0, nil},                    // same encrypted dir
		{"/a/g2", "/a2/g", 0, nil},                   // same policy
		{"/a2/g", "/a2/h", vfs.RENAME_EXCHANGE, nil}, // exchange in one dir
		{"/a/f", "/u/f", 0, nil},                     // out of an encrypted dir
		{"/u/f", "/a/f", 0, nil},                     // and back: its policy is /a's
	} {
		if err := e.p.Rename(e.t, c.from, c.to, c.flags); err != c.want {
			t.Errorf("rename(%s, %s, %d) = %v, want %v", c.from, c.to, c.flags, err, c.want)
		}
	}
}

func TestNokeyNamesAndRevalidate(t *testing.T) {
	e := newEnv(t, "v2", nil)
	e.mkdir("/e")
	id := e.encrypt("/e", 1)
	e.create("/e/hello", "world")
	e.mkdir("/e/sub")
	e.must(e.p.Symlink(e.t, "hello", "/e/link"))
	if got := e.listing("/e"); !cmp.Equal(got, []string{"hello", "sub", "link"}) {
		t.Fatalf("with the key: %q", got)
	}
	e.removeKey(id)
	nk := e.listing("/e")
	if len(nk) != 3 || nk[0] == "hello" {
		t.Fatalf("without the key: %q", nk)
	}
	for _, n := range nk {
		if _, err := fscrypt.DecodeNokeyName([]byte(n)); err != nil {
			t.Errorf("%q is not a no-key name: %v", n, err)
		}
	}
	// Look the no-key names up, twice: the second time from the dcache,
	// where RCU-walk asks fscrypt_d_revalidate and falls back to ref-walk.
	for i := 0; i < 2; i++ {
		st, err := e.p.Lstat(e.t, "/e/"+nk[1])
		if err != nil || st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
			t.Fatalf("lstat no-key dir: %v %v", st, err)
		}
	}
	buf := make([]byte, 512)
	n, err := e.p.Readlink(e.t, "/e/"+nk[2], buf)
	if err != nil || string(buf[:n]) == "hello" {
		t.Fatalf("readlink without the key: %q %v", buf[:n], err)
	}
	if _, err := e.p.Stat(e.t, "/e/hello"); err != errno.ENOENT {
		t.Fatalf("plaintext name without the key: %v", err)
	}
	e.addKey(1)
	before := e.t.Ev.Clone()
	if _, err := e.p.Lstat(e.t, "/e/"+nk[1]); err != errno.ENOENT {
		t.Fatalf("no-key name with the key: %v", err)
	}
	if d := e.t.Ev.Sub(before); d.Get(hooks.EvNokeyInvalidate) == 0 {
		t.Errorf("no no-key dentry was invalidated: %v", d)
	}
	if got := e.listing("/e"); !cmp.Equal(got, []string{"hello", "sub", "link"}) {
		t.Fatalf("key added back: %q", got)
	}
	n, err = e.p.Readlink(e.t, "/e/link", buf)
	if err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("readlink with the key: %q %v", buf[:n], err)
	}
	if st, err := e.p.Lstat(e.t, "/e/link"); err != nil || st.Size != 5 {
		t.Fatalf("lstat of encrypted symlink: %v %v", st, err)
	}
	if err := e.openClose("/e/link"); err != nil {
		t.Fatalf("open through the symlink: %v", err)
	}
}

// TestDirectoryInconsistentContextLookup: like ext4_lookup, a directory
// whose context its encrypted parent does not permit cannot be looked up.
func TestDirectoryInconsistentContextLookup(t *testing.T) {
	e := newEnv(t, "base", nil)
	e.mkdir("/e")
	e.encrypt("/e", 1)
	e.mkdir("/e/d")
	memfs.UnsafeSetContext(e.t, e.inode("/e/d"), nil)
	// Forget the cached dentry so that the next lookup asks memfs.
	e.removeKeyAndReadd(1)
	if _, err := e.p.Stat(e.t, "/e/d"); err != errno.EPERM {
		t.Fatalf("stat of inconsistent dir: %v", err)
	}
}

// removeKeyAndReadd removes and re-adds the key of byte b, dropping the
// cached dentries of what it unlocked.
func (e *env) removeKeyAndReadd(b byte) {
	e.tb.Helper()
	fd, err := e.p.Open(e.t, "/", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.must(err)
	defer e.p.Close(e.t, fd)
	id, err := e.p.AddEncryptionKey(e.t, fd, key(b))
	e.must(err)
	_, err = e.p.RemoveEncryptionKey(e.t, fd, id)
	e.must(err)
	_, err = e.p.AddEncryptionKey(e.t, fd, key(b))
	e.must(err)
}
