package ext4

import (
	"testing"

	"github.com/vfslab/vfslab/kernel"
)

// TestNewSuperBlockHashIsSignedHalfMD4: mke2fs on x86 (plain char signed)
// writes EXT2_FLAGS_SIGNED_HASH, so a new filesystem (a mount with the
// default options) hashes with signed half_md4. The default must hash every e2fsprogs half_md4 vector without a
// seed as the signed version does; names with bytes >= 0x80 tell the two
// forms apart.
func TestNewSuperBlockHashIsSignedHalfMD4(t *testing.T) {
	tk := kernel.New().NewTask("test")
	defer tk.Exit()
	sb := testSB(t, tk)
	version := sb.DefHashVersion + sb.HashUnsigned
	if version != DxHashHalfMD4 {
		t.Fatalf("default hash version %d, want %d (signed half_md4)", version, DxHashHalfMD4)
	}
	differ := 0
	for _, row := range readVectors(t, "testdata/hash-vectors.txt") {
		if row[1] != "1" || row[2] != "-" || row[3] != "0" {
			continue
		}
		name := mustHex(t, row[4])
		h := DxHashInfo{HashVersion: version, Seed: &sb.HashSeed}
		if err := Ext4fsDirhash(name, &h, nil); err != nil {
			t.Fatal(err)
		}
		if h.Hash != kernelEOF(mustHex32(t, row[5])) || h.MinorHash != mustHex32(t, row[6]) {
			t.Fatalf("name %s: %08x %08x, want signed half_md4 %s %s", row[4], h.Hash, h.MinorHash, row[5], row[6])
		}
		u := DxHashInfo{HashVersion: DxHashHalfMD4Unsigned, Seed: &sb.HashSeed}
		if err := Ext4fsDirhash(name, &u, nil); err != nil {
			t.Fatal(err)
		}
		if u.Hash != h.Hash {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("no vector tells signed from unsigned half_md4")
	}
}
