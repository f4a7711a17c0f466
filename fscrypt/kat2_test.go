package fscrypt_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"

	"github.com/dchest/siphash"

	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/fstest"
	"github.com/vfslab/vfslab/patch"
)

// TestKATDerive checks the keys of testdata/derive.txt: for each policy the
// key prepared for a regular file (contents) and for a directory
// (filenames), the dirhash key of a casefolded directory, and the hashed
// inode numbers of IV_INO_LBLK_32, under every fscrypt-v1-kdf variant.
func TestKATDerive(t *testing.T) {
	cases, err := fstest.LoadVectors("derive.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range fscrypt.V1KDFPatch.VariantNames() {
		t.Run(variant, func(t *testing.T) {
			task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.V1KDFPatch, variant))
			checked := 0
			for _, c := range cases {
				sb, p := caseFS(t, task, c)
				ino := c.Ino
				for _, r := range c.Records {
					var got []byte
					switch r[0] {
					case "contents", "filenames":
						mode := uint32(fscrypt.SIFREG | 0o644)
						if r[0] == "filenames" {
							mode = fscrypt.SIFDIR | 0o755
						}
						i := encryptedInode(t, task, sb, p, c.Nonce, ino, mode, 12)
						ino++
						got, err = fscrypt.DerivedKey(task, i)
						if err != nil {
							t.Fatal(err)
						}
					case "dirhash_key":
						d := sb.NewInode(ino, fscrypt.SIFDIR|0o755)
						ino++
						d.Casefold = true
						ctx := fscrypt.Context{Policy: p}
						copy(ctx.Nonce[:], c.Nonce)
						d.SetRawContext(ctx.Marshal())
						if err := fscrypt.GetEncryptionInfo(task, d, false); err != nil {
							t.Fatal(err)
						}
						k, ok := fscrypt.DirhashKey(d)
						if !ok {
							t.Fatalf("%s: no dirhash key", c)
						}
						got = k[:]
					case "ino_hash_key":
						// Checked through hashed_ino below; here only
						// that the file is self-consistent.
						key := fstest.MustHex(r[1])
						k0, k1 := binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[8:])
						for _, h := range c.Records {
							if h[0] != "hashed_ino" {
								continue
							}
							n, _ := strconv.ParseUint(h[1], 10, 64)
							var b [8]byte
							binary.LittleEndian.PutUint64(b[:], n)
							if fmt.Sprint(uint32(siphash.Hash(k0, k1, b[:]))) != h[2] {
								t.Fatalf("%s: derive.txt inconsistent for ino %d", c, n)
							}
						}
						continue
					case "hashed_ino":
						// The inode-hash key depends on the master key
						// only: use an IV_INO_LBLK_32 policy with it.
						n, _ := strconv.ParseUint(r[1], 10, 64)
						lp := p
						lp.ContentsMode, lp.FilenamesMode = fscrypt.ModeAES256XTS, fscrypt.ModeAES256CTS
						lp.Flags = fscrypt.PolicyFlagIVInoLblk32
						i := encryptedInode(t, task, sb, lp, c.Nonce, n, fscrypt.SIFREG|0o644, 12)
						h, ok := fscrypt.HashedIno(i)
						if !ok || fmt.Sprint(h) != r[2] {
							t.Fatalf("%s: hashed ino %d = %d, want %s", c, n, h, r[2])
						}
						checked++
						continue
					default:
						t.Fatalf("unknown record %q", r[0])
					}
					if want := r[1]; hex.EncodeToString(got) != want {
						t.Fatalf("%s: %s key\n got %x\nwant %s", c, r[0], got, want)
					}
					checked++
				}
			}
			t.Logf("%d keys checked", checked)
			if checked < 80 {
				t.Fatalf("only %d keys checked", checked)
			}
		})
	}
}

// TestKATNokeyNames checks the encoding of testdata/nokey.txt (an
// independent Python model) both ways.
func TestKATNokeyNames(t *testing.T) {
	cases, err := fstest.LoadVectors("nokey.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		for _, r := range c.Records {
			ct := fstest.MustHex(r[0])
			h, _ := strconv.ParseUint(r[1], 10, 32)
			m, _ := strconv.ParseUint(r[2], 10, 32)
			got := string(fscrypt.EncodeNokeyName(nil, uint32(h), uint32(m), ct))
			if got != r[3] {
				t.Fatalf("ciphertext %s: no-key name %s, want %s", r[0], got, r[3])
			}
			nk, err := fscrypt.DecodeNokeyName([]byte(got))
			if err != nil || nk.Hash != uint32(h) || nk.MinorHash != uint32(m) {
				t.Fatalf("decode %s: %v %v", got, nk.String(), err)
			}
			if len(ct) <= fscrypt.NokeyNameBytes && string(nk.Bytes) != string(ct) {
				t.Fatalf("decode %s: bytes %x", got, nk.Bytes)
			}
			n++
		}
	}
	if n != 240 {
		t.Fatalf("%d vectors", n)
	}
}

// TestKATDirhash checks fscrypt_fname_siphash against testdata/dirhash.txt:
// the dirhash key derived from the case's master key and nonce for a
// casefolded directory, then the SipHash of each name.
func TestKATDirhash(t *testing.T) {
	cases, err := fstest.LoadVectors("dirhash.txt")
	if err != nil {
		t.Fatal(err)
	}
	task := newTask(t)
	n := 0
	for _, c := range cases {
		sb, p := caseFS(t, task, c)
		d := sb.NewInode(c.Ino, fscrypt.SIFDIR|0o755)
		d.Casefold = true
		ctx := fscrypt.Context{Policy: p}
		copy(ctx.Nonce[:], c.Nonce)
		d.SetRawContext(ctx.Marshal())
		if err := fscrypt.GetEncryptionInfo(task, d, false); err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Records {
			if r[0] == "dirhash_key" {
				k, _ := fscrypt.DirhashKey(d)
				if hex.EncodeToString(k[:]) != r[1] {
					t.Fatalf("%s: dirhash key %x, want %s", c, k, r[1])
				}
				continue
			}
			got := fmt.Sprintf("%016x", fscrypt.FnameSiphash(task, d, fstest.MustHex(r[0])))
			if got != r[1] {
				t.Fatalf("%s: siphash(%s) = %s, want %s", c, r[0], got, r[1])
			}
			n++
		}
	}
	if n < 100 {
		t.Fatalf("%d vectors", n)
	}
}
