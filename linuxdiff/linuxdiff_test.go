package linuxdiff

import (
	"strings"
	"testing"
)

// TestNormalisers: each normaliser makes equal what must differ, and a
// real difference in the same lines survives it.
func TestNormalisers(t *testing.T) {
	cases := []struct {
		name, section string
		// a and b differ only in what the normaliser hides; c differs
		// from a in something real as well.
		a, b, c string
	}{
		{"script-prefix", "stderr",
			"/batch/003/script.sh: line 7: nosuch: command not found",
			"nosuch: command not found",
			"/batch/003/script.sh: line 7: nosuch: Permission denied"},
		{"script-prefix", "stderr",
			"sh: /mnt/scratch/d/new: Required key not available",
			"/batch/000/script.sh: line 4: /mnt/scratch/d/new: Required key not available",
			"sh: /mnt/scratch/d/new: No such file or directory"},
		{"pids", "dmesg",
			"bash (639): drop_caches: 2\nxfs_io (pid 1005) is setting deprecated v1 encryption policy; recommend upgrading to v2.",
			"sh (1): drop_caches: 2\nxfs_io (pid 1) is setting deprecated v1 encryption policy; recommend upgrading to v2.",
			"bash (639): drop_caches: 3\nxfs_io (pid 1005) is setting deprecated v1 encryption policy; recommend upgrading to v2."},
		{"nokey-names", "stdout",
			"/mnt/scratch/d/AbCdEfGhIjKlMnOpQrStUvWxYz012345\n/mnt/scratch/d/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzA",
			"/mnt/scratch/d/QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQq_\n/mnt/scratch/d/x-yZxYzXyZxYzXyZxYzXyZxYzXyZxYzX",
			"/mnt/scratch/d/AbCdEfGhIjKlMnOpQrStUvWxYz01234\n/mnt/scratch/d/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzA"},
		{"uuid", "dmesg",
			"EXT4-fs (vdb): mounted filesystem 0d1c8e5e-7d8f-4c0a-9a51-3b1b8a2c4f10 r/w with ordered data mode. Quota mode: none.",
			"EXT4-fs (vdb): mounted filesystem 5a2f0c1e-0000-4c0a-9a51-aaaaaaaaaaaa r/w with ordered data mode. Quota mode: none.",
			"EXT4-fs (vdb): mounted filesystem 0d1c8e5e-7d8f-4c0a-9a51-3b1b8a2c4f10 ro with ordered data mode. Quota mode: none."},
		{"key-serials", "stdout",
			" 613488712 --alswrv      0     0  keyring: _ses",
			" 100000000 --alswrv      0     0  keyring: _ses",
			" 613488712 --alswrv     0     0  keyring: _ses"},
		{"once-per-boot", "dmesg",
			"fscrypt: AES-256-XTS using implementation \"xts-aes-aesni\"\nEXT4-fs (vdb): unmounting filesystem.",
			"EXT4-fs (vdb): unmounting filesystem.",
			"fscrypt: AES-256-XTS using implementation \"xts-aes-aesni\"\nEXT4-fs (vdc): unmounting filesystem."},
		{"once-per-boot", "dmesg",
			"xfs_io (pid 1005) is setting deprecated v1 encryption policy; recommend upgrading to v2.\nx",
			"x",
			"xfs_io (pid 1005) is setting deprecated v1 encryption policy; recommend upgrading to v2.\ny"},
		{"once-per-boot", "dmesg",
			"xfs_io (pid 7) is setting an IV_INO_LBLK_32 encryption policy.  This should only be used if there are certain hardware limitations.\nx",
			"x",
			"xfs_io (pid 7) is setting an IV_INO_LBLK_32 encryption policy.  This should only be used if there are certain hardware limitations.\ny"},
		{"emulation-noise", "dmesg",
			"hrtimer: interrupt took 21604893 ns\nEXT4-fs (vdb): mounted",
			"EXT4-fs (vdb): mounted",
			"hrtimer: interrupt took 21604893 ns\nEXT4-fs (vdb): unmounted"},
		{"busy-inode-number", "dmesg",
			"fscrypt: vdb: 2 inode(s) still busy after removing key with identifier 69b2f6edeee720cce0577937eb8a6751, including ino 393218",
			"fscrypt: vdb: 2 inode(s) still busy after removing key with identifier 69b2f6edeee720cce0577937eb8a6751, including ino 11",
			"fscrypt: vdb: 1 inode(s) still busy after removing key with identifier 69b2f6edeee720cce0577937eb8a6751, including ino 393218"},
		{"f2fs-checkpoint-version", "dmesg",
			"F2FS-fs (vdb): Mounted with checkpoint version = 4fdaa6d5",
			"F2FS-fs (vdb): Mounted with checkpoint version = 1",
			"F2FS-fs (vdc): Mounted with checkpoint version = 4fdaa6d5"},
	}
	byName := map[string]Normaliser{}
	for _, n := range Normalisers {
		byName[n.Name] = n
	}
	tested := map[string]bool{}
	for _, c := range cases {
		n, ok := byName[c.name]
		if !ok {
			t.Fatalf("no normaliser %s", c.name)
		}
		tested[c.name] = true
		apply := func(s string) string { return strings.Join(n.Apply(c.section, strings.Split(s, "\n")), "\n") }
		if a, b := apply(c.a), apply(c.b); a != b {
			t.Errorf("%s: %q and %q still differ:\n%s\n%s", c.name, c.a, c.b, a, b)
		}
		if a, cc := apply(c.a), apply(c.c); a == cc {
			t.Errorf("%s hides a real difference: %q and %q both give %q", c.name, c.a, c.c, a)
		}
	}
	for name := range byName {
		if !tested[name] {
			t.Errorf("normaliser %s has no case here", name)
		}
	}
}

// TestNokeyNotDigests: digests, key identifiers and ordinary long names
// are not no-key names.
func TestNokeyNotDigests(t *testing.T) {
	for _, w := range []string{"69b2f6edeee720cce0577937eb8a6751", "d41d8cd98f00b204e9800998ecf8427e",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "file_number_0000000000000001"} {
		if isNokeyName(w) {
			t.Errorf("%s taken for a no-key name", w)
		}
	}
}

func TestParseHeader(t *testing.T) {
	s, err := Parse("x.sh", []byte("#!/bin/bash\n# A scenario.\n# vfslab sh --fs f2fs --seed=3 --device vdc:256M\n# kernel: 6.12\necho hi\n# vfslab sh --fs ext4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Fs != "f2fs" || s.Seed != 3 || s.Devices["vdc"] != 256<<20 || s.Kernel != "6.12" {
		t.Errorf("got %+v", s)
	}
	if got := strings.Join(s.VfslabArgs(), " "); got != "--as-linux --fs f2fs --seed=3 --device vdc:256M -- x.sh" {
		t.Errorf("vfslab args %q", got)
	}
	if _, err := Parse("y.sh", []byte("# vfslab sh --writable\n")); err == nil {
		t.Error("an option the Linux side cannot follow was accepted")
	}
	if _, err := Parse("y.sh", []byte("# vfslab sh --device vdb:lots\n")); err == nil {
		t.Error("a bad size was accepted")
	}
}

func TestKnownCheck(t *testing.T) {
	ok := Known{ID: "a", Kernel: "6.12", Script: "s.sh", Hunk: []string{"-x", "+y"}, Right: "linux", Cause: "nonce", Why: "w"}
	if err := ok.check(); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Cause = "version"
	if bad.check() == nil {
		t.Error("right=linux with cause version accepted: vfslab being wrong is fixed in the model")
	}
	bad = ok
	bad.Hunk = []string{" context"}
	if bad.check() == nil {
		t.Error("a hunk line without - or + accepted")
	}
	if _, err := LoadKnown(""); err != nil {
		t.Errorf("the built-in list: %v", err)
	}
}

func TestCompare(t *testing.T) {
	spec := &Spec{Path: "s.sh"}
	vf := Output{Stdout: "a\nb\nc\n", Status: 0}
	lx := Output{Stdout: "a\nB\nc\n", Status: 0}
	if c := Compare(spec, vf, vf, nil, "6.12.95"); c.Verdict != Identical || len(c.Hunks) != 0 {
		t.Errorf("same output: %+v", c)
	}
	c := Compare(spec, vf, lx, nil, "6.12.95")
	if c.Verdict != Unexplained || len(c.Hunks) != 1 || strings.Join(c.Hunks[0].Changed, ",") != "-b,+B" {
		t.Fatalf("one change: %+v", c)
	}
	k := []Known{{ID: "k", Kernel: "6.12", Script: "s.sh", Hunk: []string{"-b", "+B"}, Right: "both", Cause: "version", Why: "w"},
		{ID: "stale", Kernel: "6.12", Script: "s.sh", Hunk: []string{"-q"}, Right: "both", Cause: "version", Why: "w"}}
	c = Compare(spec, vf, lx, k, "6.12.95")
	if c.Verdict != KnownDifference || c.Hunks[0].Known.ID != "k" {
		t.Errorf("known: %+v", c)
	}
	if u := Unused(k, "6.12.95", []string{"s.sh"}, []Comparison{c}); len(u) != 1 || u[0].ID != "stale" {
		t.Errorf("unused: %+v", u)
	}
	if c := Compare(spec, vf, lx, k, "6.1.0"); c.Verdict != Unexplained {
		t.Errorf("an entry for 6.12 explained a 6.1 run")
	}
	c = Compare(spec, vf, Output{Stdout: "a\nb\nc\n", Status: 1}, nil, "6.12")
	if c.Verdict != Unexplained || !strings.Contains(c.Hunks[0].Text, "+== status 1") {
		t.Errorf("status: %+v", c)
	}
}

// TestEventTable: a count per operation is the difference between the 2N
// and N runs over N, summed over the vfslab events that stand for the
// kernel's; an event with no probe on Linux shows as missing.
func TestEventTable(t *testing.T) {
	linux := "EVENTS create 8 kmalloc 100\nEVENTS create 16 kmalloc 124\nEVENTS create 8 dput 10\nEVENTS create 16 dput 26\nnoise\n"
	vfslab := "EVENTS create 8 kmalloc 41\nEVENTS create 16 kmalloc 65\nEVENTS create 8 dput 33\nEVENTS create 16 dput 65\n" +
		"EVENTS create 8 fscrypt_fname_decrypt 1\nEVENTS create 16 fscrypt_fname_decrypt 9\nEVENTS create 16 fscrypt_nokey_encode 8\n"
	rows := EventTable(linux, vfslab)
	get := func(ev string) EventRow {
		for _, r := range rows {
			if r.Workload == "create" && r.Event == ev {
				return r
			}
		}
		t.Fatalf("no row %s", ev)
		return EventRow{}
	}
	if r := get("kmalloc"); r.Linux != 3 || r.Vfslab != 3 || r.LinuxMissing {
		t.Errorf("kmalloc: %+v", r)
	}
	if r := get("dput"); r.Linux != 2 || r.Vfslab != 4 {
		t.Errorf("dput: %+v", r)
	}
	if r := get("fscrypt_fname_disk_to_usr"); !r.LinuxMissing || r.Vfslab != 2 {
		t.Errorf("disk_to_usr: %+v", r)
	}
	var b strings.Builder
	PrintEventTable(&b, rows)
	if !strings.Contains(b.String(), "dput") || !strings.Contains(b.String(), "differs") {
		t.Errorf("table:\n%s", b.String())
	}
	for _, w := range EventWorkloads {
		if s := w.EventScript(true); !strings.Contains(s, "set_event_pid") || !strings.Contains(s, "EVENTS "+w.Name) {
			t.Errorf("%s: the Linux script lacks its filter or output", w.Name)
		}
	}
}
