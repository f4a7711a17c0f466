package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/fscrypt/fstest"
)

// crypt runs `vfslab crypt args...` with stdin and returns stdout, stderr
// and the exit status.
func crypt(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	old := cryptStdin
	cryptStdin = strings.NewReader(stdin)
	defer func() { cryptStdin = old }()
	var out, errb bytes.Buffer
	rc := run(append([]string{"crypt"}, args...), &out, &errb)
	return out.String(), errb.String(), rc
}

// cryptOK runs the command and requires success with one line of output.
func cryptOK(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errs, rc := crypt(t, stdin, args...)
	if rc != 0 {
		t.Fatalf("vfslab crypt %s: exit %d: %s", strings.Join(args, " "), rc, errs)
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("vfslab crypt %s: output %q is not one line", strings.Join(args, " "), out)
	}
	return strings.TrimSuffix(out, "\n")
}

func policyArgs(c *fstest.Case) []string {
	return []string{
		"--policy-version", strconv.Itoa(c.Version),
		"--contents-mode", c.Contents, "--filenames-mode", c.Filenames,
		"--flags", fmt.Sprintf("0x%02x", c.Flags),
		"--master-key", hex.EncodeToString(c.Key), "--nonce", hex.EncodeToString(c.Nonce),
		"--fs-uuid", hex.EncodeToString(c.UUID),
	}
}

func loadVectors(t *testing.T, name string) []*fstest.Case {
	t.Helper()
	cases, err := fstest.LoadVectors(name)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestCryptFnameVectors runs every filename of fscrypt/testdata/fname.txt
// (generated with xfstests' fscrypt-crypt-util) through `vfslab crypt fname`
// and, for every seventh, back through --decrypt.
func TestCryptFnameVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "fname.txt") {
		args := append(policyArgs(c), "--dir-inode", strconv.FormatUint(c.Ino, 10))
		for i, r := range c.Records {
			if testing.Short() && i%5 != 0 {
				continue
			}
			if got := cryptOK(t, "", append([]string{"fname", r[0]}, args...)...); got != r[1] {
				t.Fatalf("%s: fname %s = %s, want %s", c, r[0], got, r[1])
			}
			if i%7 == 0 {
				if got := cryptOK(t, "", append([]string{"fname", "--decrypt", r[1]}, args...)...); got != r[0] {
					t.Fatalf("%s: fname --decrypt %s = %s, want %s", c, r[1], got, r[0])
				}
				// Every fscrypt-fname-onstack variant gives the same bytes.
				for _, v := range []string{"v2", "upstream"} {
					got := cryptOK(t, "", append([]string{"fname", "--patches", "fscrypt-fname-onstack=" + v, r[0]}, args...)...)
					if got != r[1] {
						t.Fatalf("%s: fname with %s = %s, want %s", c, v, got, r[1])
					}
				}
			}
			n++
		}
	}
	if n < 500 {
		t.Fatalf("only %d names", n)
	}
}

// TestCryptContentsVectors encrypts every plaintext of contents.txt through
// `vfslab crypt contents` and decrypts the result back.
func TestCryptContentsVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "contents.txt") {
		for _, r := range c.Records {
			du, _ := strconv.Atoi(r[0])
			nunits, _ := strconv.Atoi(r[2])
			pt := bare.PlaintextStream(r[3], nunits<<du)
			args := append(policyArgs(c), "--data-unit-size", strconv.Itoa(1<<du), "--index", r[1],
				"--inode", strconv.FormatUint(c.Ino, 10))
			got := cryptOK(t, hex.EncodeToString(pt), append([]string{"contents"}, args...)...)
			ct, err := hex.DecodeString(got)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(ct)
			if hex.EncodeToString(sum[:]) != r[4] || !strings.HasPrefix(got, r[5]) {
				t.Fatalf("%s: contents du=%d index=%s: got %.32s..., want %.32s...", c, du, r[1], got, r[5])
			}
			back := cryptOK(t, got, append([]string{"contents", "--decrypt"}, args...)...)
			if back != hex.EncodeToString(pt) {
				t.Fatalf("%s: contents --decrypt did not give the plaintext back", c)
			}
			n++
		}
	}
	if n < 50 {
		t.Fatalf("only %d records", n)
	}
}

// TestCryptDeriveVectors checks `vfslab crypt derive` against derive.txt.
func TestCryptDeriveVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "derive.txt") {
		for _, r := range c.Records {
			if r[0] != "contents" && r[0] != "filenames" {
				continue
			}
			for _, variant := range []string{"base", "sync", "aeslib"} {
				args := append(policyArgs(c), "--for", r[0], "--inode", strconv.FormatUint(c.Ino, 10), "--patches", "fscrypt-v1-kdf="+variant)
				if got := cryptOK(t, "", append([]string{"derive"}, args...)...); got != r[1] {
					t.Fatalf("%s: derive --for %s (%s) = %s, want %s", c, r[0], variant, got, r[1])
				}
			}
			n++
		}
	}
	if n < 40 {
		t.Fatalf("only %d keys", n)
	}
}

func TestCryptKeyIDVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "keyid.txt") {
		for _, r := range c.Records {
			if got := cryptOK(t, "", "keyid", "--master-key", r[0]); got != r[1] {
				t.Fatalf("keyid %s = %s, want %s", r[0], got, r[1])
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d", n)
	}
}

// TestCryptNokeyVectors checks `vfslab crypt nokey` (and --decode) against
// nokey.txt.
func TestCryptNokeyVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "nokey.txt") {
		for _, r := range c.Records {
			h, _ := strconv.ParseUint(r[1], 10, 32)
			m, _ := strconv.ParseUint(r[2], 10, 32)
			dirhash := fmt.Sprintf("%02x%02x%02x%02x%02x%02x%02x%02x", byte(h), byte(h>>8), byte(h>>16), byte(h>>24),
				byte(m), byte(m>>8), byte(m>>16), byte(m>>24))
			got := cryptOK(t, "", "nokey", "--dirhash", dirhash, r[0])
			if want := hex.EncodeToString([]byte(r[3])); got != want {
				t.Fatalf("nokey %s = %s, want %s (%s)", r[0], got, want, r[3])
			}
			dec := cryptOK(t, "", "nokey", "--decode", got)
			if ct := r[0]; len(ct) <= 2*149 && dec != dirhash+ct {
				t.Fatalf("nokey --decode %s = %s, want %s", r[3], dec, dirhash+ct)
			}
			n++
		}
	}
	if n != 240 {
		t.Fatalf("%d vectors", n)
	}
}

// TestCryptDirhashVectors checks `vfslab crypt dirhash` against
// dirhash.txt.
func TestCryptDirhashVectors(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t, "dirhash.txt") {
		args := append([]string{"dirhash"}, policyArgs(c)...)
		for _, r := range c.Records {
			if r[0] == "dirhash_key" || r[0] == "-" {
				continue // the empty name is not a valid argument
			}
			if got := cryptOK(t, "", append(args, r[0])...); got != r[1] {
				t.Fatalf("%s: dirhash %s = %s, want %s", c, r[0], got, r[1])
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("%d vectors", n)
	}
}

// TestCryptErrors checks the exit statuses and messages of bad input.
func TestCryptErrors(t *testing.T) {
	key := strings.Repeat("11", 64)
	nonce := strings.Repeat("22", 16)
	for _, tc := range []struct {
		args   []string
		stdin  string
		rc     int
		stderr string
	}{
		{args: nil, rc: 2, stderr: "a subcommand is required"},
		{args: []string{"frobnicate"}, rc: 2, stderr: "unknown subcommand"},
		{args: []string{"fname", "--nonce", nonce, "6162"}, rc: 2, stderr: "--master-key is required"},
		{args: []string{"fname", "--master-key", key, "6162"}, rc: 2, stderr: "--nonce is required"},
		{args: []string{"fname", "--master-key", key, "--nonce", nonce, "zz"}, rc: 2, stderr: "not hex"},
		{args: []string{"fname", "--master-key", key, "--nonce", nonce, "--contents-mode", "ROT13", "61"}, rc: 2, stderr: "unknown encryption mode"},
		{args: []string{"fname", "--master-key", key, "--nonce", nonce}, rc: 2, stderr: "want exactly 1 argument(s), NAME_HEX"},
		// v1 does not allow HCTR2: the kernel's EINVAL and its log line.
		{args: []string{"fname", "--policy-version", "1", "--filenames-mode", "AES-256-HCTR2", "--master-key", key, "--nonce", nonce, "61"}, rc: 1, stderr: "EINVAL"},
		// DIRECT_KEY needs Adiantum.
		{args: []string{"fname", "--flags", "0x04", "--master-key", key, "--nonce", nonce, "61"}, rc: 1, stderr: "Direct key flag not allowed"},
		// A 16-byte master key is too short for AES-256-CTS-CBC.
		{args: []string{"fname", "--master-key", strings.Repeat("11", 16), "--nonce", nonce, "61"}, rc: 1, stderr: "ENOKEY"},
		{args: []string{"fname", "--master-key", strings.Repeat("11", 8), "--nonce", nonce, "61"}, rc: 1, stderr: "EINVAL"},
		{args: []string{"fname", "--master-key", key, "--nonce", nonce, strings.Repeat("61", 256)}, rc: 1, stderr: "ENAMETOOLONG"},
		{args: []string{"fname", "--decrypt", "--master-key", key, "--nonce", nonce, "0011"}, rc: 1, stderr: "EUCLEAN"},
		{args: []string{"contents", "--master-key", key, "--nonce", nonce}, stdin: "0011", rc: 2, stderr: "multiple of 16"},
		{args: []string{"contents", "--master-key", key, "--nonce", nonce, "--data-unit-size", "100"}, stdin: "00", rc: 2, stderr: "data-unit-size"},
		{args: []string{"derive", "--for", "keys", "--master-key", key, "--nonce", nonce}, rc: 2, stderr: "--for"},
		{args: []string{"keyid", "--master-key", "0011"}, rc: 1, stderr: "EINVAL"},
		{args: []string{"nokey", "0011"}, rc: 1, stderr: "EUCLEAN"},
		{args: []string{"nokey", "--decode", hex.EncodeToString([]byte("!!"))}, rc: 1, stderr: "ENOENT"},
		{args: []string{"dirhash", "--policy-version", "1", "--master-key", key, "--nonce", nonce, "61"}, rc: 1, stderr: "v1 policies can't be used on casefolded directories"},
		{args: []string{"derive", "--patches", "no-such-patch=x", "--master-key", key, "--nonce", nonce}, rc: 2, stderr: "unknown patch"},
	} {
		out, errs, rc := crypt(t, tc.stdin, tc.args...)
		if rc != tc.rc || !strings.Contains(errs, tc.stderr) || out != "" {
			t.Errorf("vfslab crypt %s: exit %d, stdout %q, stderr %q; want exit %d and %q on stderr",
				strings.Join(tc.args, " "), rc, out, errs, tc.rc, tc.stderr)
		}
	}
	if out, _, rc := crypt(t, "", "--help"); rc != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("crypt --help: %d %q", rc, out)
	}
	if out, errs, rc := crypt(t, "", "fname", "--help"); rc != 0 || !strings.Contains(out, "dir-inode") || errs != "" {
		t.Errorf("crypt fname --help: %d %q %q", rc, out, errs)
	}
}
