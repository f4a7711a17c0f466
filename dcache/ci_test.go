package dcache

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/vfslab/vfslab/errno"
)

// asciiFold is a stand-in Encoding for the tests: it folds ASCII letters
// and rejects invalid UTF-8, with the kernel's hash helpers. (The real
// NFD+casefold of Unicode 12.1 is package fsunicode's.)
type asciiFold struct{}

var errInvalid = errors.New("invalid UTF-8")

func fold(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func (asciiFold) CasefoldHash(salt uint64, name []byte) (uint32, error) {
	if !utf8.Valid(name) {
		return 0, errInvalid
	}
	h := InitNameHash(salt)
	for _, b := range name {
		h = PartialNameHash(uint64(fold(b)), h)
	}
	return EndNameHash(h), nil
}

func (asciiFold) Strncasecmp(s1, s2 []byte) (int, error) {
	if !utf8.Valid(s1) || !utf8.Valid(s2) {
		return -int(errno.EINVAL), errInvalid
	}
	if len(s1) != len(s2) {
		return 1, nil
	}
	for i := range s1 {
		if fold(s1[i]) != fold(s2[i]) {
			return 1, nil
		}
	}
	return 0, nil
}

func ciEnv(t *testing.T, strict bool) (*env, *Dentry[tInode], *Dentry[tInode]) {
	e := newEnv(t, Config[tInode]{})
	ops := GenericCIOps(CIConfig[tInode]{
		Encoding:      asciiFold{},
		Strict:        strict,
		NeedsCasefold: func(dir *tInode) bool { return dir.cf },
	})
	DSetDOp(e.t, e.root, ops)
	cf := e.add(t, e.root, "cf", DirectoryType)
	cf.Inode().cf = true
	plain := e.add(t, e.root, "plain", DirectoryType)
	if cf.Flags()&(OpHash|OpCompare) != OpHash|OpCompare {
		t.Fatalf("children must inherit the operations: %v", cf)
	}
	return e, cf, plain
}

func (e *env) create(t *testing.T, dir *Dentry[tInode], name string) *Dentry[tInode] {
	t.Helper()
	q := Qstr{Name: name}
	if err := DHash(e.t, dir, &q); err != nil {
		t.Fatalf("d_hash(%q): %v", name, err)
	}
	d, err := DAlloc(e.t, dir, q)
	if err != nil {
		t.Fatal(err)
	}
	DAdd(e.t, d, newInode(RegularType).get())
	return d
}

func TestCaseInsensitiveLookup(t *testing.T) {
	e, cf, plain := ciEnv(t, false)
	tk := e.t
	foo := e.create(t, cf, "Foo.TXT")
	pfoo := e.create(t, plain, "Foo.TXT")
	for _, c := range []struct {
		dir  *Dentry[tInode]
		name string
		want *Dentry[tInode]
	}{
		{cf, "Foo.TXT", foo}, {cf, "foo.txt", foo}, {cf, "FOO.txt", foo}, {cf, "foo.tx", nil},
		{plain, "Foo.TXT", pfoo}, {plain, "foo.txt", nil},
	} {
		got, err := DHashAndLookup(tk, c.dir, c.name)
		if err != nil || got != c.want {
			t.Errorf("lookup %q in %s = %v, %v; want %v", c.name, c.dir.Name().Name, got, err, c.want)
		}
		Dput(tk, got)
		q := Qstr{Name: c.name}
		if err := DHash(tk, c.dir, &q); err != nil {
			t.Fatal(err)
		}
		tk.RCU.ReadLock()
		rcu, seq := DLookupRCU(tk, c.dir, &q)
		if rcu != c.want || (rcu != nil && rcu.Seq().Retry(seq)) {
			t.Errorf("__d_lookup_rcu %q in %s = %v", c.name, c.dir.Name().Name, rcu)
		}
		tk.RCU.ReadUnlock()
	}
	// The hash of a casefolded name is salted with the directory.
	q1, q2 := Qstr{Name: "X"}, Qstr{Name: "x"}
	_ = DHash(tk, cf, &q1)
	_ = DHash(tk, cf, &q2)
	if q1.Hash != q2.Hash {
		t.Fatal("names differing in case must hash alike in a casefolded directory")
	}
	q3 := Qstr{Name: "X"}
	_ = DHash(tk, plain, &q3)
	if q3.Hash != FullNameHash(plain.Salt(), "X") {
		t.Fatal("a plain directory keeps full_name_hash")
	}
	Dput(tk, foo)
	Dput(tk, pfoo)
}

func TestCaseInsensitiveInvalidUTF8(t *testing.T) {
	bad := "caf\xe9" // Latin-1, not UTF-8
	t.Run("relaxed", func(t *testing.T) {
		e, cf, _ := ciEnv(t, false)
		d := e.create(t, cf, bad)
		// Hashed as raw bytes, matched only exactly.
		got, err := DHashAndLookup(e.t, cf, bad)
		if err != nil || got != d {
			t.Fatalf("exact lookup of an invalid name: %v %v", got, err)
		}
		Dput(e.t, got)
		if got, _ := DHashAndLookup(e.t, cf, "CAF\xe9"); got != nil {
			t.Fatalf("an invalid name matched case-insensitively: %v", got)
		}
		Dput(e.t, d)
	})
	t.Run("strict", func(t *testing.T) {
		e, cf, plain := ciEnv(t, true)
		if _, err := DHashAndLookup(e.t, cf, bad); !errors.Is(err, errno.EINVAL) {
			t.Fatalf("strict d_hash of an invalid name: %v, want EINVAL", err)
		}
		if _, err := DHashAndLookup(e.t, plain, bad); err != nil {
			t.Fatalf("strict mode only applies to casefolded directories: %v", err)
		}
	})
}

func TestCaseInsensitiveCompareRules(t *testing.T) {
	e, cf, plain := ciEnv(t, false)
	tk := e.t
	cmp := cf.Ops().Compare
	d := e.create(t, cf, "ABC")
	q := Qstr{Name: "abc"}
	tk.RCU.ReadLock()
	defer tk.RCU.ReadUnlock()
	if r := cmp(tk, d, "ABC", &q); r != 0 {
		t.Fatalf("casefold compare = %d", r)
	}
	if r := cmp(tk, d, "ABCD", &q); r == 0 {
		t.Fatal("different lengths matched")
	}
	// A no-key name is ciphertext: no case to fold.
	d.SetFlags(tk, NokeyName)
	if r := cmp(tk, d, "ABC", &q); r != 1 {
		t.Fatalf("no-key name compared case-insensitively: %d", r)
	}
	if r := cmp(tk, d, "abc", &q); r != 0 {
		t.Fatal("no-key names still match exactly")
	}
	// In a directory that is not casefolded, only exact matches.
	p := e.create(t, plain, "ABC")
	if r := cmp(tk, p, "ABC", &q); r != 1 {
		t.Fatalf("plain directory compare = %d", r)
	}
	Dput(tk, d)
	Dput(tk, p)
}
