package shell

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/xts"

	"github.com/vfslab/vfslab/patch"
)

// checkout is the stand-in xfstests checkout of testdata/xfstests.
const checkout = "testdata/xfstests"

// runCheck runs `vfslab sh --xfstests` on args and returns its output,
// status and results directory.
func runCheck(t *testing.T, fstyp string, args ...string) (string, int, string) {
	t.Helper()
	res := t.TempDir()
	var out bytes.Buffer
	st := Main(append([]string{"--fs", fstyp, "--xfstests", checkout, "--results", res}, args...), strings.NewReader(""), &out, &out)
	return out.String(), st, res
}

// TestXfstestsRunsAsCheck runs the stand-in checkout's groups and checks
// check's lines and summary: a pass with its time, an output mismatch
// with the diff and .out.bad, _notrun's reason, a helper the prelude
// lacks stopping the test with the file that defines it, a WARNING in the
// kernel log failing a test whose output matches (_check_dmesg), the
// EXIT trap's status, another filesystem's test not run, an unknown test
// ignored, and status 1.
func TestXfstestsRunsAsCheck(t *testing.T) {
	out, st, res := runCheck(t, "ext4", "-g", "smoke,dmesg", "-g", "status", "f2fs/001", "nope/999")
	if st != 1 {
		t.Errorf("status %d, want 1\n%s", st, out)
	}
	for _, re := range []string{
		`(?m)^nope/999 - unknown test, ignored$`,
		`(?m)^FSTYP         -- ext4$`,
		`(?m)^ext4/001 +\d+s$`,
		`(?m)^f2fs/001 +\[not run\] not suitable for this filesystem type: ext4$`,
		`(?m)^generic/001 +\d+s$`,
		`(?m)^generic/002 +- output mismatch \(see .*/generic/002\.out\.bad\)\n    --- tests/generic/002\.out\t`,
		`(?m)^    \+this line is not in 002\.out$`,
		`(?m)^    \(Run 'diff -u .*tests/generic/002\.out .*/generic/002\.out\.bad'  to see the entire diff\)$`,
		`(?m)^generic/003 +\[not run\] no-such-program utility required, skipped this test$`,
		`(?m)^generic/004 +\[failed, exit status 1\]- output mismatch`,
		`_vfslab_test_helper_only_in_common: xfstests helper missing from vfslab sh's prelude \(xfstests defines it in common/rc\); the test stops here`,
		`(?m)^generic/005 +_check_dmesg: something found in dmesg \(see .*/generic/005\.dmesg\)$`,
		`(?m)^generic/006 +\[failed, exit status 1\]$`,
		`(?m)^Ran: ext4/001 f2fs/001 generic/001 generic/002 generic/003 generic/004 generic/005 generic/006$`,
		`(?m)^Not run: f2fs/001 generic/003$`,
		`(?m)^Failures: generic/002 generic/004 generic/005 generic/006$`,
		`(?m)^Failed 4 of 8 tests$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(res, "generic/004.out.bad")); strings.Contains(string(b), "after the helper") {
		t.Errorf("the test went on after the missing helper:\n%s", b)
	}
	bad, err := os.ReadFile(filepath.Join(res, "generic/002.out.bad"))
	if err != nil || string(bad) != "QA output created by 002\nthis line is not in 002.out\n" {
		t.Errorf("002.out.bad = %q, %v", bad, err)
	}
	if b, err := os.ReadFile(filepath.Join(res, "generic/003.notrun")); err != nil || string(b) != "no-such-program utility required, skipped this test\n" {
		t.Errorf("003.notrun = %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(res, "generic/005.dmesg")); err != nil || !strings.Contains(string(b), "WARNING: CPU: 0") {
		t.Errorf("005.dmesg = %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(res, "generic/001.full")); err != nil || !strings.Contains(string(b), "Silence is golden") {
		t.Errorf("001.full = %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(res, "check.time")); err != nil || !regexp.MustCompile(`(?m)^generic/001 \d+$`).Match(b) {
		t.Errorf("check.time = %q, %v", b, err)
	}
	// Nothing was written into the checkout.
	filepath.Walk(checkout, func(p string, fi os.FileInfo, err error) error {
		if err == nil && (strings.Contains(p, "results") || strings.HasSuffix(p, ".out.bad") || strings.HasSuffix(p, ".full")) {
			t.Errorf("%s written into the checkout", p)
		}
		return nil
	})
}

// TestXfstestsGroupsPerFilesystem: a group collects generic/ and the
// filesystem's own directory, as check's get_group_list does.
func TestXfstestsGroupsPerFilesystem(t *testing.T) {
	out, st, _ := runCheck(t, "f2fs", "-g", "smoke", "-x", "dmesg")
	if !strings.Contains(out, "Ran: f2fs/001 generic/001 generic/002 generic/003 generic/004\n") || st != 1 {
		t.Errorf("status %d:\n%s", st, out)
	}
	out, st, _ = runCheck(t, "ext4", "-g", "nosuchgroup")
	if !strings.Contains(out, `Group "nosuchgroup" is empty or not defined?`) || st != 1 {
		t.Errorf("an empty group: status %d:\n%s", st, out)
	}
	out, st, _ = runCheck(t, "ext4", "generic/001")
	if !strings.Contains(out, "Passed all 1 tests\n") || st != 0 {
		t.Errorf("a passing test: status %d:\n%s", st, out)
	}
}

// TestXfstestsGroupList reads group lists as check finds them: a built
// checkout's group.list, an old one's hand-written group file, or the
// tests' _begin_fstest lines.
func TestXfstestsGroupList(t *testing.T) {
	gl, err := readGroupList(checkout, "generic")
	if err != nil || strings.Join(gl["001"], " ") != "auto quick smoke" || strings.Join(gl["006"], " ") != "auto status" {
		t.Fatalf("from _begin_fstest: %v, %v", gl, err)
	}
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "tests/xfs"), 0o755)
	os.WriteFile(filepath.Join(root, "tests/xfs/group"), []byte("# comment\n001 auto quick # why\n002 rw\n"), 0o644)
	gl, err = readGroupList(root, "xfs")
	if err != nil || strings.Join(gl["001"], " ") != "auto quick" || strings.Join(gl["002"], " ") != "rw" {
		t.Fatalf("from group: %v, %v", gl, err)
	}
	if gl, err := readGroupList(root, "none"); gl != nil || err != nil {
		t.Fatalf("a missing directory: %v, %v", gl, err)
	}
}

// TestXfstestsResultsNotInCheckout refuses a results directory inside
// the checkout.
func TestXfstestsResultsNotInCheckout(t *testing.T) {
	var out bytes.Buffer
	st := Main([]string{"--xfstests", checkout, "--results", filepath.Join(checkout, "results"), "generic/001"}, strings.NewReader(""), &out, &out)
	if st != 2 || !strings.Contains(out.String(), "never go into the checkout") {
		t.Errorf("status %d: %s", st, out.String())
	}
	if _, err := os.Stat(filepath.Join(checkout, "results")); err == nil {
		os.RemoveAll(filepath.Join(checkout, "results"))
		t.Error("results directory made in the checkout")
	}
}

// TestRunnerNamesNoTest: the runner passes tests by running them, so its
// code names none.
func TestRunnerNamesNoTest(t *testing.T) {
	files, _ := filepath.Glob("xfstests*")
	files = append(files, "fsck.go", "debugfs.go", "f2fs_tools.go", "cryptutil.go", "xz.go", "sysfs.go")
	re := regexp.MustCompile(`\b(generic|ext4|f2fs|xfs|btrfs|overlay|shared)/[0-9]{3}\b`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := re.Find(b); m != nil {
			t.Errorf("%s names the test %s", f, m)
		}
	}
}

// testKeyHex is xfstests' TEST_RAW_KEY (the bytes 1..64) in hex.
var testKeyHex = func() string {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(i + 1)
	}
	return hex.EncodeToString(b)
}()

// TestFscryptCryptUtilVectors pins the program's key identifier and a
// filename's ciphertext (the values of vfslab crypt's examples, which
// xfstests' fscrypt-crypt-util printed), and round-trips every cipher.
func TestFscryptCryptUtilVectors(t *testing.T) {
	out, st := runScript(t, "", "-c", "/src/fscrypt-crypt-util --dump-key-identifier "+testKeyHex+
		"; echo -n foo | /src/fscrypt-crypt-util AES-256-CTS-CBC "+testKeyHex+
		" --kdf=HKDF-SHA512 --file-nonce=000102030405060708090a0b0c0d0e0f --padding=16 --data-unit-size=255 | od -An -tx1 | tr -d ' \\n'")
	if st != 0 || out != "69b2f6edeee720cce0577937eb8a6751\n19f5ef064509ac90dcb5f29489bbf701" {
		t.Errorf("status %d: %q", st, out)
	}
	for name := range fscryptCiphers {
		for _, n := range []int{16, 17, 31, 32, 33, 48, 100, 4096} {
			if fscryptCiphers[name].minInput == 0 && n%16 != 0 && name != "AES-256-XTS" {
				continue
			}
			out, st := runScript(t, "", "-c", "head -c "+itoa(n)+" /dev/urandom > /tmp/p; /src/fscrypt-crypt-util "+name+" "+testKeyHex+
				" --data-unit-index=7 --padding=16 --data-unit-size=4096 < /tmp/p > /tmp/c; /src/fscrypt-crypt-util "+name+" "+testKeyHex+
				" --decrypt --data-unit-index=7 --padding=16 --data-unit-size=4096 < /tmp/c | head -c "+itoa(n)+" | cmp - /tmp/p; cmp -s /tmp/c /tmp/p && echo same; exit 0")
			if st != 0 || out != "" {
				t.Errorf("%s, %d bytes: status %d: %q", name, n, st, out)
			}
		}
	}
	out, st = runScript(t, "", "-c", "echo x | /src/fscrypt-crypt-util AES-256-XTS 00; echo x | /src/fscrypt-crypt-util Foo "+testKeyHex)
	if st != 1 || out != "[fscrypt-crypt-util] ERROR: Master key is too short for cipher\n[fscrypt-crypt-util] ERROR: Unknown cipher: Foo\n" {
		t.Errorf("errors: status %d: %q", st, out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestCryptUtilXTSAgainstXCrypto checks the program's XTS with
// golang.org/x/crypto/xts, whose tweak is a 64-bit sector number (the
// fscrypt IV of a data unit index).
func TestCryptUtilXTSAgainstXCrypto(t *testing.T) {
	key, _ := hex.DecodeString(testKeyHex)
	ref, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		t.Fatal(err)
	}
	crypt, err := newXTS(key)
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, 4096)
	for i := range plain {
		plain[i] = byte(i * 7)
	}
	want := make([]byte, len(plain))
	ref.Encrypt(want, plain, 12345)
	got := append([]byte(nil), plain...)
	iv := &cryptIV{}
	iv.bytes[0], iv.bytes[1] = 12345&0xff, 12345>>8
	if err := crypt(got, iv.bytes[:], false); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("XTS differs from x/crypto/xts (%v)", err)
	}
}

// ciphertextScript writes a file and a name under a v2 policy, unmounts,
// and compares the device's bytes at the file's extents and the
// directory's on-disk name with what fscrypt-crypt-util computes from the
// raw key, the nonce (debugfs or dump.f2fs) and the inode number: the
// pieces of _verify_ciphertext_for_encryption_policy.
const ciphertextScript = `
_scratch_mkfs_encrypted >/dev/null 2>&1
_scratch_mount
key=$(_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" | awk '{print $NF}')
mkdir $SCRATCH_MNT/d
_set_encpolicy $SCRATCH_MNT/d $key -v 2
head -c 8192 /dev/urandom > /tmp/plain
cp /tmp/plain $SCRATCH_MNT/d/file
ino=$(stat -c %i $SCRATCH_MNT/d/file)
dino=$(stat -c %i $SCRATCH_MNT/d)
blocks=$(_get_ciphertext_block_list $SCRATCH_MNT/d/file)
_scratch_unmount
nonce=$(_get_encryption_nonce $SCRATCH_DEV $ino)
_dump_ciphertext_blocks $SCRATCH_DEV $blocks > /tmp/actual
/src/fscrypt-crypt-util AES-256-XTS KEYHEX --mode-num=1 --kdf=HKDF-SHA512 --data-unit-size=4096 \
	--file-nonce=$nonce --inode-number=$ino < /tmp/plain > /tmp/expected
cmp /tmp/expected /tmp/actual && echo contents match
cmp -s /tmp/plain /tmp/actual && echo stored in the clear
dnonce=$(_get_encryption_nonce $SCRATCH_DEV $dino)
_get_ciphertext_filename $SCRATCH_DEV $ino $dino > /tmp/aname
echo -n file | /src/fscrypt-crypt-util AES-256-CTS-CBC KEYHEX --mode-num=4 --kdf=HKDF-SHA512 \
	--file-nonce=$dnonce --padding=4 --data-unit-size=255 > /tmp/ename
cmp /tmp/ename /tmp/aname && echo name matches
`

// TestCiphertextOnDisk runs ciphertextScript on ext4 and f2fs under
// --xfstests' prelude.
func TestCiphertextOnDisk(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		t.Run(fs, func(t *testing.T) {
			m, err := NewMachine(patch.Set{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.close()
			s := &Shell{m: m, fstyp: fs, xfs: &xfsState{here: "/"}}
			var out bytes.Buffer
			st := s.run(strings.NewReader(strings.ReplaceAll(ciphertextScript, "KEYHEX", testKeyHex)), "t", strings.NewReader(""), &out, &out, nil)
			if st != 0 || out.String() != "contents match\nname matches\n" {
				t.Errorf("status %d:\n%s", st, out.String())
			}
		})
	}
}

// ciphertextByNumberScript checks the two things xfstests' ciphertext
// tests need beyond ciphertextScript: an IV_INO_LBLK_64 file's contents,
// whose key is derived with the filesystem's UUID (the image's s_uuid,
// which the mount must copy to the superblock), and the nonce of a file
// in a v1 directory read by inode number once the unmount has dropped
// the key, when no name lookup can reach it (debugfs ea_get <INO>,
// dump.f2fs -i).
const ciphertextByNumberScript = `
_scratch_mkfs_stable_inodes_encrypted >/dev/null 2>&1
_scratch_mount
key=$(_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" | awk '{print $NF}')
mkdir $SCRATCH_MNT/d
_set_encpolicy $SCRATCH_MNT/d $key -v 2 -f 8
head -c 8192 /dev/urandom > /tmp/plain
cp /tmp/plain $SCRATCH_MNT/d/file
ino=$(stat -c %i $SCRATCH_MNT/d/file)
blocks=$(_get_ciphertext_block_list $SCRATCH_MNT/d/file)
desc=$(_generate_key_descriptor)
_init_session_keyring
_add_session_encryption_key $desc "$TEST_RAW_KEY"
mkdir $SCRATCH_MNT/v1
_set_encpolicy $SCRATCH_MNT/v1 $desc
echo x > $SCRATCH_MNT/v1/file
v1ino=$(stat -c %i $SCRATCH_MNT/v1/file)
_scratch_unmount
_unlink_session_encryption_key $desc
uuid=$(blkid -s UUID -o value $SCRATCH_DEV | tr -d -)
_dump_ciphertext_blocks $SCRATCH_DEV $blocks > /tmp/actual
/src/fscrypt-crypt-util AES-256-XTS KEYHEX --mode-num=1 --kdf=HKDF-SHA512 --data-unit-size=4096 \
	--iv-ino-lblk-64 --fs-uuid=$uuid --inode-number=$ino < /tmp/plain > /tmp/expected
cmp /tmp/expected /tmp/actual && echo lblk64 contents match
n=$(_get_encryption_nonce $SCRATCH_DEV $v1ino)
echo "v1 nonce: ${#n} hex digits"
n=$(_get_encryption_nonce $SCRATCH_DEV 99999)
echo "no inode: ${#n} hex digits"
`

// TestCiphertextByNumber runs ciphertextByNumberScript on ext4 and f2fs.
func TestCiphertextByNumber(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		t.Run(fs, func(t *testing.T) {
			m, err := NewMachine(patch.Set{}, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer m.close()
			s := &Shell{m: m, fstyp: fs, xfs: &xfsState{here: "/"}}
			var out bytes.Buffer
			st := s.run(strings.NewReader(strings.ReplaceAll(ciphertextByNumberScript, "KEYHEX", testKeyHex)), "t", strings.NewReader(""), &out, &out, nil)
			if want := "lblk64 contents match\nv1 nonce: 32 hex digits\nno inode: 0 hex digits\n"; st != 0 || out.String() != want {
				t.Errorf("status %d:\n%s", st, out.String())
			}
		})
	}
}

// TestToolsOfTheMachine: xz round trips and is a real .xz stream (magic),
// tr -C complements, head ends an endless input, mktemp, stat -f, blkid's
// value output, e2fsck's statuses, fiemap's lines, /proc/filesystems and
// the sysfs feature files.
func TestToolsOfTheMachine(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"xz", `echo hello | xz | xz -d; echo hi | xz -c | head -c 6 | od -An -tx1`, "hello\n fd 37 7a 58 5a 00\n"},
		{"xz dict", `n=$(head -c 100000 /dev/zero | xz --lzma2=dict=64M,mf=hc4,mode=fast,nice=16 | wc -c); [ $n -lt 1000 ] && echo small`, "small\n"},
		{"tr -C", `echo 'a-b_c!' | tr -d -C a-z; echo`, "abc\n"},
		{"head of urandom", `tr -d -C a-zA-Z0-9 < /dev/urandom | head -c 20 | wc -c`, "20\n"},
		{"mktemp", `f=$(mktemp -p /tmp); [ -f $f ] && echo file; d=$(mktemp -d); [ -d $d ] && echo dir`, "file\ndir\n"},
		{"stat -f", `_scratch_mkfs >/dev/null; _scratch_mount; stat -f -c '%S %T' $SCRATCH_MNT`, "4096 ext2/ext3\n"},
		{"e2fsck without a filesystem", `e2fsck -fn /dev/vdd >/dev/null 2>&1; echo $?`, "8\n"},
		{"e2fsck clean", `_scratch_mkfs >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d; _scratch_unmount; fsck -t ext4 -nf $SCRATCH_DEV >/dev/null 2>&1; echo $?`, "0\n"},
		{"fiemap", `_scratch_mkfs >/dev/null; _scratch_mount; xfs_io -f -c "pwrite 0 8k" -c "truncate 12k" -c fiemap $SCRATCH_MNT/f | sed -e 's/[0-9]*\.\.[0-9]*$/N/' | tail -2`, "\t0: [0..15]: N\n\t1: [16..23]: hole\n"},
		{"proc filesystems", `grep -w ext4 /proc/filesystems; grep -c overlay /proc/filesystems`, "\text4\n0\n"},
		{"sysfs features", `test -f /sys/fs/ext4/features/casefold && echo casefold; test -e /sys/fs/ext4/features/verity || echo no verity`, "casefold\nno verity\n"},
		{"grep -e twice", `echo b | grep -e a -e b`, "b\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _ := runScript(t, "", "-c", c.script)
			if out != c.want {
				t.Errorf("got %q, want %q", out, c.want)
			}
		})
	}
}

// TestF2fsLinearLookupTools is what inject.f2fs, fsck.f2fs
// --nolinear-lookup and f2fs_io do on an f2fs image: a casefolded
// directory's dentry given a wrong hash is found by the linear fallback
// of lookup_mode=auto until the superblock's flag turns it off.
func TestF2fsLinearLookupTools(t *testing.T) {
	if testing.Short() {
		t.Skip("a 64 MiB image (mkfs.f2fs's smallest)")
	}
	img := filepath.Join(t.TempDir(), "f2fs.img")
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 64<<20); err != nil {
		t.Fatal(err)
	}
	script := `
mkfs.f2fs -f -O casefold -C utf8 /dev/vdb >/dev/null
mount -o lookup_mode=auto /dev/vdb /mnt/scratch
mkdir /mnt/scratch/dir
f2fs_io setflags casefold /mnt/scratch/dir >/dev/null
touch /mnt/scratch/dir/heart
ino=$(stat -c %i /mnt/scratch/dir/heart)
umount /mnt/scratch
inject.f2fs --dent 0 -h | grep -c 'd_hash:'
for n in 1 0; do
	fsck.f2fs --nolinear-lookup=$n /dev/vdb >/dev/null
	fsck.f2fs /dev/vdb | grep linear_lookup
	inject.f2fs --dent --mb d_hash --nid $ino --val 0x9a2ea068 /dev/vdb >/dev/null
	mount -o lookup_mode=auto /dev/vdb /mnt/scratch
	[ -f /mnt/scratch/dir/heart ] && echo found || echo missing
	umount /mnt/scratch
done
`
	out, _ := runScript(t, "", "--writable", "--image", img+":/dev/vdb", "-c", script)
	want := "1\nInfo: Casefold: linear_lookup [disable]\nmissing\nInfo: Casefold: linear_lookup [enable]\nfound\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// TestXfstestsStaysInCheckout refuses a TEST with ".." or an absolute
// path, and a test or .out file that is a symbolic link out of the
// checkout: no host file is read or printed.
func TestXfstestsStaysInCheckout(t *testing.T) {
	for _, a := range []string{"../../../../etc/passwd", "/etc/passwd", "generic/../../x"} {
		var out bytes.Buffer
		st := Main([]string{"--xfstests", checkout, "--results", t.TempDir(), a}, strings.NewReader(""), &out, &out)
		if st != 2 || !strings.Contains(out.String(), "not a test under tests/") {
			t.Errorf("%s: status %d: %s", a, st, out.String())
		}
	}
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(checkout)); err != nil {
		t.Fatal(err)
	}
	host := filepath.Join(t.TempDir(), "host-file")
	os.WriteFile(host, []byte("_begin_fstest auto quick\necho HOST-SECRET\n"), 0o644)
	os.WriteFile(host+".out", []byte("HOST-SECRET-OUT\n"), 0o644)
	if err := os.Symlink(host, filepath.Join(root, "tests/generic/777")); err != nil {
		t.Fatal(err)
	}
	// 001's expected output is a link out of the checkout.
	os.Remove(filepath.Join(root, "tests/generic/001.out"))
	os.Symlink(host+".out", filepath.Join(root, "tests/generic/001.out"))
	var out bytes.Buffer
	Main([]string{"--xfstests", root, "--results", t.TempDir(), "generic/777", "generic/001"}, strings.NewReader(""), &out, &out)
	if strings.Contains(out.String(), "HOST-SECRET") {
		t.Fatalf("a host file's contents were printed:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "generic/777 - unknown test, ignored") || !strings.Contains(out.String(), "outside the checkout") {
		t.Errorf("want 777 ignored and 001.out refused:\n%s", out.String())
	}
}
