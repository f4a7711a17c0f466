package fscrypt_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"github.com/vfslab/vfslab/kernel"
	"strconv"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/fscrypt/fstest"
	"github.com/vfslab/vfslab/patch"
)

// TestPublicKeyIdentifier is the check value of kernel-facts.md: master key
// 0x01..0x40 has v2 identifier 69b2f6edeee720cce0577937eb8a6751.
func TestPublicKeyIdentifier(t *testing.T) {
	key := make([]byte, 64)
	for i := range key {
		key[i] = byte(i + 1)
	}
	id := fscrypt.KeyIdentifier(key)
	if got, want := hex.EncodeToString(id[:]), "69b2f6edeee720cce0577937eb8a6751"; got != want {
		t.Fatalf("identifier = %s, want %s", got, want)
	}
	// The ioctl path computes the same and writes it back.
	task := newTask(t)
	sb := newSB(t)
	arg := &fscrypt.AddKeyArg{KeySpec: fscrypt.KeySpecifier{Type: fscrypt.KeySpecTypeIdentifier}, RawSize: 64, Raw: key}
	if err := fscrypt.IoctlAddKey(task, kernel.RootCred, sb, arg); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(arg.KeySpec.U[:16]); got != "69b2f6edeee720cce0577937eb8a6751" {
		t.Fatalf("ioctl identifier = %s", got)
	}
}

func TestKATKeyIdentifier(t *testing.T) {
	cases, err := fstest.LoadVectors("keyid.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		for _, r := range c.Records {
			id := fscrypt.KeyIdentifier(fstest.MustHex(r[0]))
			if got := hex.EncodeToString(id[:]); got != r[1] {
				t.Errorf("key %s: identifier %s, want %s", r[0], got, r[1])
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d vectors", n)
	}
}

// TestKATFilenames encrypts every name of testdata/fname.txt under every
// fscrypt-fname-onstack variant and compares with the oracle, then decrypts
// the oracle's ciphertext back.
func TestKATFilenames(t *testing.T) {
	cases, err := fstest.LoadVectors("fname.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, variant := range fscrypt.FnameOnstackPatch.VariantNames() {
		t.Run(variant, func(t *testing.T) {
			task := newTaskWith(t, patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, variant))
			total := 0
			for _, c := range cases {
				sb, p := caseFS(t, task, c)
				dir := encryptedInode(t, task, sb, p, c.Nonce, c.Ino, fscrypt.SIFDIR|0o755, 12)
				buf, err := fscrypt.FnameAllocBuffer(task, 255)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range c.Records {
					name, want := fstest.MustHex(r[0]), fstest.MustHex(r[1])
					n, ok := fscrypt.FnameEncryptedSize(dir, len(name), 255)
					if !ok || n != len(want) {
						t.Fatalf("%s: name len %d: encrypted size %d, oracle %d", c, len(name), n, len(want))
					}
					out := make([]byte, n)
					if err := fscrypt.FnameEncrypt(task, dir, name, out); err != nil {
						t.Fatalf("%s: encrypt: %v", c, err)
					}
					if !bytes.Equal(out, want) {
						t.Fatalf("%s: name %x:\n got %x\nwant %x", c, name, out, want)
					}
					m, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, want, buf)
					if err != nil || !bytes.Equal(buf[:m], name) {
						t.Fatalf("%s: decrypt %x = %x, %v; want %x", c, want, buf[:m], err, name)
					}
					total++
				}
				fscrypt.FnameFreeBuffer(task, buf)
			}
			if total < 2700 {
				t.Fatalf("only %d names checked", total)
			}
		})
	}
}

// TestKATContents checks every data unit of testdata/contents.txt through
// fscrypt_crypt_data_unit's public users: EncryptBlockInplace for data units
// equal to the block size, and the page cache path where it applies.
func TestKATContents(t *testing.T) {
	cases, err := fstest.LoadVectors("contents.txt")
	if err != nil {
		t.Fatal(err)
	}
	task := newTask(t)
	total := 0
	for _, c := range cases {
		sb, p := caseFS(t, task, c)
		for _, r := range c.Records {
			du, _ := strconv.Atoi(r[0])
			idx, _ := strconv.ParseUint(r[1], 10, 64)
			nunits, _ := strconv.Atoi(r[2])
			pt := bare.PlaintextStream(r[3], nunits<<du)
			pol := p
			// Data units below the block size go through
			// log2_data_unit_size, except for IV_INO_LBLK_32 which
			// only supports data unit == block, so there the
			// filesystem gets small blocks.
			blockBits := uint8(12)
			if pol.Version == fscrypt.PolicyV2 && du < 12 {
				if pol.Flags&fscrypt.PolicyFlagIVInoLblk32 != 0 {
					blockBits = uint8(du)
				} else {
					pol.Log2DataUnitSize = uint8(du)
				}
			}
			// IV_INO_LBLK_* need every data unit index of a file to
			// fit in 32 bits: give the filesystem a s_maxbytes that
			// allows it, as a small-block ext4 has.
			sb.MaxBytesLimit = 1 << 44
			if pol.Flags&(fscrypt.PolicyFlagIVInoLblk64|fscrypt.PolicyFlagIVInoLblk32) != 0 {
				sb.MaxBytesLimit = 1 << (32 + du)
			}
			file := encryptedInode(t, task, sb, pol, c.Nonce, c.Ino, fscrypt.SIFREG|0o644, blockBits)
			// Encrypt each data unit through the write path's page
			// cache function (a bounce page per unit) ...
			ct := make([]byte, len(pt))
			for u := 0; u < nunits; u++ {
				pos := (idx + uint64(u)) << du
				f := block.NewFolio(pos>>block.PageShift, 0)
				f.Host = fscrypt.Inode(file)
				offs := int(pos & (block.PageSize - 1))
				copy(f.Data[offs:], pt[u<<du:(u+1)<<du])
				bounce, err := fscrypt.EncryptPagecacheBlocks(task, f, 1<<du, offs)
				if err != nil {
					t.Fatalf("%s: encrypt: %v", c, err)
				}
				copy(ct[u<<du:], bounce[offs:offs+1<<du])
				fscrypt.FreeBouncePage(task, bounce)
			}
			sum := sha256.Sum256(ct)
			if hex.EncodeToString(sum[:]) != r[4] || hex.EncodeToString(ct[:64]) != r[5] {
				t.Fatalf("%s: du %d index %d: got %x..., want %s...", c, du, idx, ct[:16], r[5][:32])
			}
			// ... and decrypt it in place through the read path's, and
			// through fscrypt_decrypt_block_inplace when a data unit is
			// a block.
			for u := 0; u < nunits; u++ {
				pos := (idx + uint64(u)) << du
				f := block.NewFolio(pos>>block.PageShift, 0)
				f.Host = fscrypt.Inode(file)
				offs := int(pos & (block.PageSize - 1))
				copy(f.Data[offs:], ct[u<<du:(u+1)<<du])
				if err := fscrypt.DecryptPagecacheBlocks(task, f, 1<<du, offs); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(f.Data[offs:offs+1<<du], pt[u<<du:(u+1)<<du]) {
					t.Fatalf("%s: page cache decrypt mismatch in unit %d", c, u)
				}
				if int(blockBits) == du {
					unit := bytes.Clone(ct[u<<du : (u+1)<<du])
					if err := fscrypt.DecryptBlockInplace(task, file, unit, idx+uint64(u)); err != nil || !bytes.Equal(unit, pt[u<<du:(u+1)<<du]) {
						t.Fatalf("%s: block inplace decrypt of unit %d: %v", c, u, err)
					}
				}
			}
			total++
		}
	}
	if total < 50 {
		t.Fatalf("only %d records", total)
	}
}
