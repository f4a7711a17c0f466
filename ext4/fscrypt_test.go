package ext4

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// fscryptDir returns a directory encrypted by package fscrypt (policy v2,
// AES-256-XTS / AES-256-CTS, 16-byte padding, see encryptDir), casefolded
// or not; forgetKey later takes its key away.
func fscryptDir(t testing.TB, casefold bool) (*kernel.Task, *Inode) {
	t.Helper()
	tk, dir := newTestDir(t, dirOpts{casefold: casefold, encrypt: true})
	return tk, dir
}

// TestFscryptNames: an htree of names encrypted by package fscrypt, with
// the SipHash hashes stored after each name when the directory is also
// casefolded; readdir shows no-key names without the key, and they look up
// to the same inodes.
func TestFscryptNames(t *testing.T) {
	for _, casefold := range []bool{false, true} {
		tk, dir := fscryptDir(t, casefold)
		var names []string
		for i := 0; i < 400; i++ {
			names = append(names, fmt.Sprintf("Name-%d-%s", i, strings.Repeat("p", i%50)))
		}
		for i, n := range names {
			mustAdd(t, tk, dir, n, uint32(100+i))
		}
		mustCheck(t, tk, dir)
		if !dir.IsDx() {
			t.Fatal("no htree")
		}
		for i, n := range names {
			q := n
			if casefold {
				q = strings.ToUpper(n)
			}
			if ino, err := InodeByName(tk, dir, []byte(q)); err != nil || ino != uint32(100+i) {
				t.Fatalf("casefold=%v lookup %q: %d %v", casefold, q, ino, err)
			}
		}
		forgetKey(t, tk, dir)
		listed := listDir(t, tk, dir)
		if len(listed) != len(names)+2 || strings.Contains(strings.Join(listed, " "), "Name-1-") {
			t.Fatalf("no-key readdir: %d %v", len(listed), listed[:3])
		}
		for _, e := range listed[2:] {
			nk := e[:strings.Index(e, ":")]
			r, err := find(tk, dir, nk)
			if err != nil || r == nil || fmt.Sprintf("%s:%d:8", nk, r.Entry.Inode) != e {
				t.Fatalf("casefold=%v no-key lookup %q: %v %v", casefold, nk, r, err)
			}
		}
		if err := AddEntry(tk, dir, []byte("new"), 5, SIfreg); err == nil {
			t.Fatal("create without the key succeeded")
		}
	}
}
