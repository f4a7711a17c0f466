package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/vfslab/vfslab/libfs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/kernel"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the dump tests")

// dumpKey is the 64-byte master key of the encrypted dump tests.
var dumpKey = func() string {
	var b []byte
	for i := 0; i < 64; i++ {
		b = append(b, byte(0x40+i))
	}
	return hex.EncodeToString(b)
}()

// dumpRun runs `vfslab dump args...`.
func dumpRun(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	rc := run(append([]string{"dump"}, args...), &out, &errb)
	return out.String(), errb.String(), rc
}

// writeNames writes names, one per line, to a file in a test directory.
func writeNames(t *testing.T, names []string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "names")
	if err := os.WriteFile(p, []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// unicodeDumpNames mixes case pairs (the second of each pair is refused
// in a casefolded directory), NFD forms, an ignorable code point, invalid
// UTF-8 and plain ASCII.
var unicodeDumpNames = []string{"Straße", "STRASSE", "ÅNGSTRÖM", "a\u030angstro\u0308m", "Ωμέγα", "ǅemal", "ﬁle",
	"a\u200bb", "x\xffy", "İstanbul", "README"}

func longNames(n, size int) []string {
	var out []string
	for i := 0; i < n; i++ {
		s := fmt.Sprintf("file-%02d-", i)
		out = append(out, s+strings.Repeat(string(rune('a'+i%26)), size-len(s)))
	}
	return out
}

// TestDumpGolden pins the text (and one JSON) output on small
// directories. Encrypted directories use a fixed key and nonce, so their
// ciphertexts are stable. Run with -update to rewrite the files after an
// intended change, and review the diff.
func TestDumpGolden(t *testing.T) {
	uni := writeNames(t, unicodeDumpNames)
	long := writeNames(t, longNames(45, 188))
	f2long := writeNames(t, longNames(30, 200))
	cases := []struct {
		name string
		args []string
	}{
		{"ext4-linear", []string{"ext4", "--count", "5"}},
		{"ext4-htree-seed", []string{"ext4", "--names", long, "--hash-version", "tea_unsigned", "--hash-seed", "00112233-4455-6677-8899-aabbccddeeff"}},
		{"ext4-casefold", []string{"ext4", "--names", uni, "--casefold"}},
		{"ext4-casefold-encrypt", []string{"ext4", "--names", uni, "--casefold", "--encrypt", "--master-key", dumpKey}},
		{"ext4-casefold-encrypt-nokey", []string{"ext4", "--names", uni, "--casefold", "--encrypt", "--master-key", dumpKey, "--no-key"}},
		{"ext4-nodx-encrypt-nokey", []string{"ext4", "--count", "4", "--dir-index=false", "--metadata-csum=false", "--encrypt", "--master-key", dumpKey, "--padding", "4", "--no-key"}},
		{"f2fs-inline", []string{"f2fs", "--count", "5"}},
		{"f2fs-levels", []string{"f2fs", "--names", f2long, "--inline=false"}},
		{"f2fs-dir-level-casefold-strict", []string{"f2fs", "--names", uni, "--inline=false", "--dir-level", "2", "--casefold", "--strict"}},
		{"f2fs-casefold-encrypt-nokey", []string{"f2fs", "--names", uni, "--casefold", "--encrypt", "--master-key", dumpKey, "--filenames-mode", "Adiantum", "--padding", "16", "--no-key"}},
		{"f2fs-casefold-encrypt-json", []string{"f2fs", "--count", "3", "--casefold", "--encrypt", "--master-key", dumpKey, "--json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errs, rc := dumpRun(c.args...)
			if rc != 0 || errs != "" {
				t.Fatalf("exit %d: %s\n%s", rc, errs, out)
			}
			path := filepath.Join("testdata", "dump", c.name+".golden")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), out); diff != "" {
				t.Errorf("output differs from %s (-want +got):\n%s", path, diff)
			}
		})
	}
}

// dumpBuild parses args and builds the directory, returning the report
// with the directory behind it.
func dumpBuild(t *testing.T, args ...string) (*kernel.Task, *dumpReport) {
	t.Helper()
	c, dfs, err := parseDump(args)
	if err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	tk := kernel.New().NewTask("test")
	t.Cleanup(tk.Exit)
	c.t = tk
	rep, err := c.runGuarded(dfs)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return tk, rep
}

// readdirNames lists the directory with the package's readdir (without
// "." and ".."), as the kernel would show it.
func readdirNames(t *testing.T, tk *kernel.Task, rep *dumpReport) []string {
	t.Helper()
	var names []string
	actor := func(name []byte, ino uint32, dtype uint8) bool {
		if s := string(name); s != "." && s != ".." {
			names = append(names, s)
		}
		return true
	}
	var err error
	switch dir := rep.dir.(type) {
	case *ext4.Inode:
		err = ext4.Readdir(tk, dir, &ext4.DirContext{Actor: actor})
	case *f2fs.Inode:
		err = f2fs.Readdir(tk, dir, &f2fs.DirContext{Actor: actor})
	default:
		t.Fatalf("directory %T", rep.dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}

func hex32(t *testing.T, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		t.Fatalf("bad hash %q", s)
	}
	return uint32(v)
}

// TestDumpAgreesWithKernel builds directories of 400 names in every mix
// of casefolding, encryption and key presence and checks the dump against
// the simulated kernel and the hash command: the checker passes; the names
// shown are the ones readdir returns (the created names with the key,
// no-key names without); every ext4 htree leaf holds only hashes of its
// index range and every f2fs block only hashes of its bucket; and in
// unencrypted directories every hash is the one `vfslab hash` gives for
// the name. The JSON form carries the same report.
func TestDumpAgreesWithKernel(t *testing.T) {
	for _, fsName := range []string{"ext4", "f2fs"} {
		for _, cf := range []bool{false, true} {
			for _, mode := range []string{"plain", "key", "nokey"} {
				args := []string{fsName, "--count", "400"}
				if cf {
					args = append(args, "--casefold")
				}
				if mode != "plain" {
					args = append(args, "--encrypt", "--master-key", dumpKey)
				}
				if mode == "nokey" {
					args = append(args, "--no-key")
				}
				t.Run(fmt.Sprintf("%s/casefold=%v/%s", fsName, cf, mode), func(t *testing.T) {
					checkDumpAgainstKernel(t, mode, args)
				})
			}
		}
	}
}

func checkDumpAgainstKernel(t *testing.T, mode string, args []string) {
	tk, rep := dumpBuild(t, args...)
	if !rep.Check.OK || rep.Created != 400 || len(rep.Refused) != 0 {
		t.Fatalf("check %+v, created %d, refused %v", rep.Check, rep.Created, rep.Refused)
	}
	var shown []string
	for _, b := range rep.Blocks {
		for _, e := range b.Entries {
			if e.Unused || e.Name == "." || e.Name == ".." {
				continue
			}
			shown = append(shown, string(e.shown))
			if e.NoKey != (mode == "nokey") {
				t.Errorf("entry %q: nokey %v in mode %s", e.Name, e.NoKey, mode)
			}
			if (e.DiskHex != "") != (mode != "plain") {
				t.Errorf("entry %q: disk bytes %q in mode %s", e.Name, e.DiskHex, mode)
			}
			h := hex32(t, e.Hash)
			switch {
			case rep.FS == "ext4" && b.HashLo != "":
				if !inHashRange(t, h, &b) {
					t.Errorf("block %d: hash %08x outside the leaf's range %s", b.Block, h, hashRange(&b))
				}
			case rep.FS == "f2fs" && b.Bucket != nil:
				if uint64(h)%b.Buckets != *b.Bucket {
					t.Errorf("page %d: hash %08x not in bucket %d of %d", b.Block, h, *b.Bucket, b.Buckets)
				}
			}
			if mode == "plain" {
				hargs := []string{rep.FS}
				if rep.FS == "ext4" {
					hargs = append(hargs, "--version", rep.Dir.HashVersion)
				}
				if rep.Dir.Casefold {
					hargs = append(hargs, "--casefold")
				}
				want := e.Hash
				if rep.FS == "ext4" {
					want += " " + e.Minor
				}
				if got := hashOK(t, append(hargs, e.NameHex)...); got != want {
					t.Errorf("%q: dump shows %s, vfslab hash %v gives %s", e.Name, want, hargs, got)
				}
			}
		}
	}
	sort.Strings(shown)
	if diff := cmp.Diff(readdirNames(t, tk, rep), shown); diff != "" {
		t.Errorf("names differ from readdir's (-readdir +dump):\n%s", diff)
	}
	if mode != "nokey" {
		var want []string
		for i := 0; i < 400; i++ {
			want = append(want, strconv.Itoa(i))
		}
		sort.Strings(want)
		if diff := cmp.Diff(want, shown); diff != "" {
			t.Errorf("names differ from the created ones (-created +dump):\n%s", diff)
		}
	}
	if rep.FS == "ext4" && (rep.Dir.Htree == nil || !*rep.Dir.Htree) {
		t.Errorf("400 names made no htree")
	}
	if rep.FS == "f2fs" && len(rep.Blocks) < 2 {
		t.Errorf("400 names stayed inline")
	}

	out, errs, rc := dumpRun(append(args, "--json")...)
	if rc != 0 {
		t.Fatalf("--json: exit %d: %s", rc, errs)
	}
	var got dumpReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(*rep, got, cmpopts.IgnoreUnexported(dumpReport{}, dumpEntry{}, dumpRefusal{})); diff != "" {
		t.Errorf("JSON differs from the report (-report +json):\n%s", diff)
	}
}

// inHashRange reports whether hash h belongs in an htree block whose index
// entry gives it the range [lo, hi): a hash equal to hi (bit 0 cleared)
// belongs there too when hi's bit 0 says the next block continues a run of
// equal hashes.
func inHashRange(t *testing.T, h uint32, b *dumpBlock) bool {
	if h < hex32(t, b.HashLo)&^1 {
		return false
	}
	if b.HashHi == "" {
		return true
	}
	hi := hex32(t, b.HashHi)
	return h < hi&^1 || (h == hi&^1 && hi&1 != 0)
}

// TestDumpTwoLevelHtree: 6000 names of 250 bytes make an htree with dx
// nodes; the dump walks root -> nodes -> leaves, every block lies inside
// its parent's hash range and every entry inside its leaf's.
func TestDumpTwoLevelHtree(t *testing.T) {
	names := writeNames(t, longNames(6000, 250))
	_, rep := dumpBuild(t, "ext4", "--names", names)
	if !rep.Check.OK || rep.Created != 6000 {
		t.Fatalf("check %+v, created %d", rep.Check, rep.Created)
	}
	root := rep.Blocks[0]
	if root.Kind != "dx_root" || root.IndirectLevels == nil || *root.IndirectLevels != 1 {
		t.Fatalf("root: %+v", root)
	}
	parent := map[uint32]*dumpBlock{}
	for i := range rep.Blocks {
		b := &rep.Blocks[i]
		for _, e := range b.Index {
			parent[e.Block] = b
		}
	}
	nodes, leaves, entries := 0, 0, 0
	for i := range rep.Blocks[1:] {
		b := &rep.Blocks[i+1]
		p := parent[uint32(b.Block)]
		if p == nil || b.HashLo == "" {
			t.Fatalf("block %d (%s) is not in the tree", b.Block, b.Kind)
		}
		switch b.Kind {
		case "dx_node":
			nodes++
			if p.Kind != "dx_root" || b.Count == 0 || b.Count > b.Limit {
				t.Errorf("node %d: parent %s, count %d, limit %d", b.Block, p.Kind, b.Count, b.Limit)
			}
		case "leaf":
			leaves++
			if p.Kind != "dx_node" {
				t.Errorf("leaf %d under a %s", b.Block, p.Kind)
			}
			if !inHashRange(t, hex32(t, b.HashLo), p) {
				t.Errorf("leaf %d range %s outside node %d's %s", b.Block, hashRange(b), p.Block, hashRange(p))
			}
			for _, e := range b.Entries {
				if e.Unused {
					continue
				}
				entries++
				if !inHashRange(t, hex32(t, e.Hash), b) {
					t.Errorf("leaf %d: hash %s outside %s", b.Block, e.Hash, hashRange(b))
				}
			}
		default:
			t.Errorf("block %d: kind %s", b.Block, b.Kind)
		}
	}
	if nodes < 2 || leaves < 508 || entries != 6000 {
		t.Errorf("%d nodes, %d leaves, %d entries", nodes, leaves, entries)
	}
}

// TestDumpNamesInput: names from standard input, empty lines skipped,
// names the VFS or the filesystem refuse reported and skipped.
func TestDumpNamesInput(t *testing.T) {
	old := dumpStdin
	defer func() { dumpStdin = old }()
	for _, fsName := range []string{"ext4", "f2fs"} {
		dumpStdin = strings.NewReader("a\n\nb\na\nc/d\n..\n" + strings.Repeat("n", 256) + "\nB\n")
		out, errs, rc := dumpRun(fsName, "--names", "-", "--json")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", fsName, rc, errs)
		}
		var rep dumpReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		var refused []string
		for _, r := range rep.Refused {
			refused = append(refused, r.Name+": "+r.Error)
		}
		want := []string{"a: " + describeErr(errno.EEXIST), "c/d: " + describeErr(errno.EINVAL),
			"..: " + describeErr(errno.EEXIST), strings.Repeat("n", 256) + ": " + describeErr(errno.ENAMETOOLONG)}
		if rep.Created != 3 || !cmp.Equal(refused, want) {
			t.Errorf("%s: created %d, refused %q; want 3 and %q", fsName, rep.Created, refused, want)
		}
	}
}

// TestDumpCheckVerdict: the checker's problems become the verdict, the
// text form lists them, and a failing check is exit status 1's cause.
func TestDumpCheckVerdict(t *testing.T) {
	if v := verdict(nil); !v.OK || v.Problems != nil {
		t.Errorf("nil error: %+v", v)
	}
	for _, err := range []error{&libfs.CheckError{FS: "ext4", Problems: []string{"p1", "p2"}}, &libfs.CheckError{FS: "f2fs", Problems: []string{"p1", "p2"}}} {
		v := verdict(fmt.Errorf("wrapped: %w", err))
		if v.OK || !cmp.Equal(v.Problems, []string{"p1", "p2"}) {
			t.Errorf("%T: %+v", err, v)
		}
	}
	if v := verdict(errno.EIO); v.OK || len(v.Problems) != 1 || !strings.Contains(v.Problems[0], "EIO") {
		t.Errorf("EIO: %+v", v)
	}
	_, rep := dumpBuild(t, "ext4", "--count", "1")
	rep.Check = verdict(&libfs.CheckError{FS: "ext4", Problems: []string{"block 0 off 24: bad rec_len 3"}})
	var b bytes.Buffer
	if err := rep.writeText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "check: 1 problems\n  block 0 off 24: bad rec_len 3\n") {
		t.Errorf("text form:\n%s", b.String())
	}
}

// TestDumpErrors: bad command lines exit 2 with a message on stderr and
// nothing on stdout.
func TestDumpErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	cases := []struct {
		args []string
		msg  string
	}{
		{nil, "a filesystem is required"},
		{[]string{"xfs"}, "unknown filesystem"},
		{[]string{"ext4", "extra"}, "unexpected argument"},
		{[]string{"ext4", "--count", "3", "--names", "x"}, "exclude each other"},
		{[]string{"ext4", "--count", "-1"}, `invalid argument "-1" for "--count" flag: want an integer in 0..1048576`},
		{[]string{"f2fs", "--strict"}, "--strict needs --casefold"},
		{[]string{"f2fs", "--master-key", dumpKey}, "--master-key needs --encrypt"},
		{[]string{"f2fs", "--no-key"}, "--no-key needs --encrypt"},
		{[]string{"f2fs", "--encrypt"}, "--encrypt needs --master-key"},
		{[]string{"f2fs", "--encrypt", "--master-key", "xyz"}, "not hex"},
		{[]string{"f2fs", "--encrypt", "--master-key", "0011"}, "2 bytes, want 16-64"},
		{[]string{"ext4", "--encrypt", "--master-key", dumpKey, "--nonce", "00"}, "1 bytes, want 16"},
		{[]string{"ext4", "--encrypt", "--master-key", dumpKey, "--padding", "12"}, "--padding 12"},
		{[]string{"ext4", "--encrypt", "--master-key", dumpKey, "--filenames-mode", "AES-256-XTS"}, "not a filenames mode"},
		{[]string{"ext4", "--encrypt", "--master-key", dumpKey, "--filenames-mode", "DES"}, "unknown encryption mode"},
		{[]string{"ext4", "--hash-version", "md5"}, "--hash-version"},
		{[]string{"ext4", "--hash-version", "siphash"}, "--hash-version"},
		{[]string{"ext4", "--hash-seed", "0011"}, "2 bytes, want 16"},
		{[]string{"f2fs", "--hash-version", "tea"}, "unknown flag: --hash-version"},
		{[]string{"ext4", "--inline"}, "unknown flag: --inline"},
		{[]string{"f2fs", "--dir-level", "64"}, "--dir-level 64"},
		{[]string{"f2fs", "--names", missing}, "--names"},
	}
	for _, c := range cases {
		out, errs, rc := dumpRun(c.args...)
		if rc != 2 || out != "" || !strings.Contains(errs, c.msg) {
			t.Errorf("vfslab dump %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, rc, out, errs, c.msg)
		}
	}
	for _, args := range [][]string{{"--help"}, {"ext4", "--help"}, {"f2fs", "-h"}} {
		out, errs, rc := dumpRun(args...)
		if rc != 0 || !strings.Contains(out, "vfslab dump") || errs != "" {
			t.Errorf("%v: exit %d, output %q", args, rc, out+errs)
		}
	}
}

// TestDumpSiphashAcrossCommands: in casefolded encrypted directories with
// the same key and nonce, the hashes ext4 stores after each name and the
// hash_code f2fs stores are both the SipHash of the casefolded plaintext
// under the directory's dirhash key, as `vfslab crypt dirhash` computes it
// through package fscrypt: ext4 keeps the high word (bit 0 cleared) and the
// low word, f2fs the low word.
func TestDumpSiphashAcrossCommands(t *testing.T) {
	names := writeNames(t, unicodeDumpNames)
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		t.Fatal(err)
	}
	reports := map[string]*dumpReport{}
	for _, fsName := range []string{"ext4", "f2fs"} {
		out, errs, rc := dumpRun(fsName, "--names", names, "--casefold", "--encrypt", "--master-key", dumpKey, "--json")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", fsName, rc, errs)
		}
		var rep dumpReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		reports[fsName] = &rep
	}
	f2fsHash := map[string]string{}
	for _, b := range reports["f2fs"].Blocks {
		for _, e := range b.Entries {
			f2fsHash[e.NameHex] = e.Hash
		}
	}
	checked := 0
	for _, b := range reports["ext4"].Blocks {
		for _, e := range b.Entries {
			if e.Unused || e.Name == "." || e.Name == ".." {
				continue
			}
			if !e.HashStored {
				t.Fatalf("%q: no stored hash", e.Name)
			}
			plain, _ := hex.DecodeString(e.NameHex)
			folded := plain
			buf := make([]byte, 255)
			if n, err := um.Casefold(buf, plain); err == nil && n > 0 {
				folded = buf[:n]
			}
			sip := cryptOK(t, "", "dirhash", "--master-key", dumpKey, "--nonce", defaultDumpNonce, "--flags", "3", hex.EncodeToString(folded))
			if want := eofAdjust(sip[:8]) + ":" + sip[8:]; e.Hash+":"+e.Minor != want {
				t.Errorf("ext4 %q: stored %s:%s, crypt dirhash gives %s", e.Name, e.Hash, e.Minor, want)
			}
			if got := f2fsHash[e.NameHex]; got != sip[8:] {
				t.Errorf("f2fs %q: hash_code %s, want %s", e.Name, got, sip[8:])
			}
			checked++
		}
	}
	if checked != 9 {
		t.Errorf("%d names checked, want 9", checked)
	}
}
