package fscrypt_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
)

// TestPolicyLayouts pins the byte layouts of kernel-facts.md.
func TestPolicyLayouts(t *testing.T) {
	p1 := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: 1, FilenamesMode: 4, Flags: 2, Descriptor: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}}
	if got, want := p1.Marshal(), []byte{0, 1, 4, 2, 1, 2, 3, 4, 5, 6, 7, 8}; !bytes.Equal(got, want) {
		t.Errorf("v1 policy = %x, want %x", got, want)
	}
	p2 := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: 1, FilenamesMode: 10, Flags: 0x13, Log2DataUnitSize: 12}
	for i := range p2.Identifier {
		p2.Identifier[i] = byte(0xa0 + i)
	}
	want2 := append([]byte{2, 1, 10, 0x13, 12, 0, 0, 0}, p2.Identifier[:]...)
	if got := p2.Marshal(); !bytes.Equal(got, want2) {
		t.Errorf("v2 policy = %x, want %x", got, want2)
	}
	var nonce [16]byte
	for i := range nonce {
		nonce[i] = byte(0x50 + i)
	}
	c1 := fscrypt.Context{Policy: p1, Nonce: nonce}
	if got, want := c1.Marshal(), append([]byte{1, 1, 4, 2, 1, 2, 3, 4, 5, 6, 7, 8}, nonce[:]...); !bytes.Equal(got, want) || len(got) != 28 {
		t.Errorf("v1 context = %x, want %x", got, want)
	}
	c2 := fscrypt.Context{Policy: p2, Nonce: nonce}
	if got, want := c2.Marshal(), append(append([]byte(nil), want2...), nonce[:]...); !bytes.Equal(got, want) || len(got) != 40 {
		t.Errorf("v2 context = %x, want %x", got, want)
	}
	for _, c := range []fscrypt.Context{c1, c2} {
		back, err := fscrypt.ParseContext(c.Marshal())
		if err != nil || !cmp.Equal(back, c) {
			t.Errorf("ParseContext(Marshal(%s)) = %s, %v", c.String(), back.String(), err)
		}
		pp, err := fscrypt.ParsePolicy(c.Policy.Marshal())
		if err != nil || !pp.Equal(&c.Policy) {
			t.Errorf("ParsePolicy round trip of %s: %v", c.Policy.String(), err)
		}
	}
	for _, bad := range [][]byte{nil, {1}, {0}, {2, 1, 4, 0}, {3, 1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, append(c1.Marshal(), 0), c2.Marshal()[:39]} {
		if _, err := fscrypt.ParseContext(bad); err != errno.EINVAL {
			t.Errorf("ParseContext(%x) = %v, want EINVAL", bad, err)
		}
	}
	if got := c2.String(); got != "v2 AES-256-XTS/AES-256-HCTR2 flags=0x13(pad32|IV_INO_LBLK_32) du=12 key=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf nonce=505152535455565758595a5b5c5d5e5f" {
		t.Errorf("String = %q", got)
	}
}

// TestSupportedPolicyMatrix checks every mode pair and flag combination
// against the rules of kernel-facts.md, written here independently of the
// code under test.
func TestSupportedPolicyMatrix(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	dir := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	modes := []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	ivsize := map[uint8]int{1: 16, 4: 16, 5: 16, 6: 16, 9: 32, 10: 32}
	v1pairs := map[[2]uint8]bool{{1, 4}: true, {5, 6}: true, {9, 9}: true}
	accepted := 0
	for _, version := range []uint8{0, 2} {
		for _, cm := range modes {
			for _, fm := range modes {
				for flags := 0; flags < 0x40; flags++ {
					p := fscrypt.Policy{Version: version, ContentsMode: cm, FilenamesMode: fm, Flags: uint8(flags)}
					pair := [2]uint8{cm, fm}
					ok := v1pairs[pair] || (version == 2 && pair == [2]uint8{1, 10})
					allowed := 0x03 | 0x04
					if version == 2 {
						allowed |= 0x08 | 0x10
					}
					if flags&^allowed != 0 {
						ok = false
					}
					methods := 0
					for _, f := range []int{0x04, 0x08, 0x10} {
						if flags&f != 0 {
							methods++
						}
					}
					if methods > 1 {
						ok = false
					}
					if flags&0x04 != 0 && (cm != fm || ivsize[cm] < 24) {
						ok = false
					}
					if flags&(0x08|0x10) != 0 && cm != 1 {
						ok = false
					}
					if got := fscrypt.SupportedPolicy(task, &p, dir); got != ok {
						t.Errorf("SupportedPolicy(%s) = %t, want %t", p.String(), got, ok)
					}
					if ok {
						accepted++
					}
				}
			}
		}
	}
	if accepted != 3*4+4 /* v1 */ +4*4+4+2*4*2 /* v2 */ {
		t.Errorf("%d policies accepted", accepted)
	}
}

// TestSupportedPolicyFilesystemLimits checks the rules that depend on the
// filesystem and the inode: casefold, data unit sizes, IV_INO_LBLK needs.
func TestSupportedPolicyFilesystemLimits(t *testing.T) {
	task := newTask(t)
	base := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: 1, FilenamesMode: 4}
	for _, tc := range []struct {
		name  string
		setup func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy)
		ok    bool
		log   string
	}{
		{"v2 plain", func(*bare.SB, *bare.Inode, *fscrypt.Policy) {}, true, ""},
		{"v1 casefold", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { i.Casefold = true; p.Version = 0 }, false, "v1 policies can't be used on casefolded directories"},
		{"v2 casefold", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { i.Casefold = true }, true, ""},
		{"du 512", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Log2DataUnitSize = 9 }, true, ""},
		{"du 256", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Log2DataUnitSize = 8 }, false, "Unsupported log2_data_unit_size"},
		{"du 8192", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Log2DataUnitSize = 13 }, false, "Unsupported log2_data_unit_size"},
		{"du no subblock", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Log2DataUnitSize = 9; sb.NoSubblock = true }, false, "does not support configuring crypto data unit size"},
		{"lblk32 du 512", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) {
			p.Log2DataUnitSize = 9
			p.Flags = 0x10
		}, false, "Sub-block data units not yet supported with IV_INO_LBLK_32"},
		{"lblk64 ok", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Flags = 0x08; sb.MaxBytesLimit = 1 << 44 }, true, ""},
		{"lblk64 big file", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Flags = 0x08; sb.MaxBytesLimit = 1<<44 + 1 }, false, "maximum file size is too large"},
		{"lblk64 unstable", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Flags = 0x08; sb.NoStableInodes = true }, false, "stable inode numbers"},
		{"lblk32 64-bit inodes", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Flags = 0x10; sb.No32BitInodes = true }, false, "because its inode numbers are too long"},
		{"reserved", func(sb *bare.SB, i *bare.Inode, p *fscrypt.Policy) { p.Reserved[1] = 1 }, false, "Reserved bits set"},
	} {
		task.K.Log = &kernel.Log{}
		sb := newSB(t)
		i := sb.NewInode(0, fscrypt.SIFDIR|0o755)
		p := base
		tc.setup(sb, i, &p)
		if got := fscrypt.SupportedPolicy(task, &p, i); got != tc.ok {
			t.Errorf("%s: SupportedPolicy = %t, want %t", tc.name, got, tc.ok)
		}
		if tc.log != "" && !task.K.Log.Contains(tc.log) {
			t.Errorf("%s: log %q lacks %q", tc.name, task.K.Log.Lines(), tc.log)
		}
	}
}

// policyArg returns a v2 policy naming id, as the ioctl's buffer.
func v2Policy(id [16]byte, flags uint8) fscrypt.Policy {
	return fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: 1, FilenamesMode: 4, Flags: flags, Identifier: id}
}

// TestSetGetPolicy follows FS_IOC_SET_ENCRYPTION_POLICY's rules and the get
// ioctls.
func TestSetGetPolicy(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	key := bytes.Repeat([]byte{7}, 64)
	id, _ := addKey(t, task, sb, 2, key)
	user := &kernel.Cred{UID: 1000}
	p := v2Policy(id, 2)

	file := sb.NewInode(0, fscrypt.SIFREG|0o644)
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, file, p.Marshal()); err != errno.ENOTDIR {
		t.Errorf("set on a file: %v, want ENOTDIR", err)
	}
	full := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	full.Entries = 1
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, full, p.Marshal()); err != errno.ENOTEMPTY {
		t.Errorf("set on a non-empty dir: %v, want ENOTEMPTY", err)
	}
	dir := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	for _, bad := range []struct {
		arg  []byte
		want error
	}{
		{nil, errno.EFAULT},
		{[]byte{1}, errno.EINVAL},
		{p.Marshal()[:10], errno.EFAULT},
	} {
		if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, bad.arg); err != bad.want {
			t.Errorf("set %x: %v, want %v", bad.arg, err, bad.want)
		}
	}
	other := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	other.Owner = 1
	if err := fscrypt.IoctlSetPolicy(task, user, other, p.Marshal()); err != errno.EACCES {
		t.Errorf("set by a non-owner: %v, want EACCES", err)
	}
	// A v2 key the caller never added: ENOKEY (root has CAP_FOWNER).
	mine := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	mine.Owner = 1000
	if err := fscrypt.IoctlSetPolicy(task, user, mine, p.Marshal()); err != errno.ENOKEY {
		t.Errorf("set by a user without the key: %v, want ENOKEY", err)
	}
	unknown := v2Policy([16]byte{1}, 0)
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, mine, unknown.Marshal()); err != nil {
		t.Errorf("CAP_FOWNER may set a policy for a key it did not add: %v", err)
	}
	// Unsupported policy.
	bad := p
	bad.FilenamesMode = 10
	bad.ContentsMode = 5
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, bad.Marshal()); err != errno.EINVAL {
		t.Errorf("set unsupported: %v, want EINVAL", err)
	}
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, p.Marshal()); err != nil {
		t.Fatalf("set: %v", err)
	}
	if !dir.IsEncrypted() {
		t.Fatal("not marked encrypted")
	}
	// The same policy again is fine even now that the dir is not empty;
	// a different one is EEXIST.
	dir.Entries = 3
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, p.Marshal()); err != nil {
		t.Errorf("set same again: %v", err)
	}
	q := v2Policy(id, 3)
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, dir, q.Marshal()); err != errno.EEXIST {
		t.Errorf("set different: %v, want EEXIST", err)
	}
	// A corrupt context counts as a different policy.
	corrupt := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	corrupt.SetRawContext([]byte{9, 9, 9})
	if err := fscrypt.IoctlSetPolicy(task, kernel.RootCred, corrupt, p.Marshal()); err != errno.EEXIST {
		t.Errorf("set over a corrupt context: %v, want EEXIST", err)
	}

	// GET_ENCRYPTION_POLICY is v1-only.
	if err := fscrypt.IoctlGetPolicy(task, dir, make([]byte, 12)); err != errno.EINVAL {
		t.Errorf("get v1 of a v2 policy: %v, want EINVAL", err)
	}
	if err := fscrypt.IoctlGetPolicy(task, file, make([]byte, 12)); err != errno.ENODATA {
		t.Errorf("get of an unencrypted file: %v, want ENODATA", err)
	}
	// GET_ENCRYPTION_POLICY_EX.
	arg := make([]byte, 8+24)
	binary.LittleEndian.PutUint64(arg, 24)
	if err := fscrypt.IoctlGetPolicyEx(task, dir, arg); err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint64(arg) != 24 || !bytes.Equal(arg[8:], p.Marshal()) {
		t.Errorf("get ex = %x", arg)
	}
	binary.LittleEndian.PutUint64(arg, 12)
	if err := fscrypt.IoctlGetPolicyEx(task, dir, arg); err != errno.EOVERFLOW {
		t.Errorf("get ex with room for 12: %v, want EOVERFLOW", err)
	}
	// GET_ENCRYPTION_NONCE returns the nonce of the stored context.
	nonce, err := fscrypt.IoctlGetNonce(task, dir)
	ctx, _ := fscrypt.ParseContext(dir.RawContext())
	if err != nil || nonce != ctx.Nonce || nonce == [16]byte{} {
		t.Errorf("nonce %x, %v; context %s", nonce, err, ctx.String())
	}
	if _, err := fscrypt.IoctlGetNonce(task, file); err != errno.ENODATA {
		t.Errorf("nonce of an unencrypted file: %v", err)
	}
	if _, err := fscrypt.IoctlGetNonce(task, corrupt); err != errno.EINVAL {
		t.Errorf("nonce of a corrupt context: %v", err)
	}

	// A v1 policy needs no key to be set (only adding a descriptor key
	// needs CAP_SYS_ADMIN); GET_ENCRYPTION_POLICY returns it.
	v1dir := sb.NewInode(0, fscrypt.SIFDIR|0o755)
	v1dir.Owner = 1000
	p1 := fscrypt.Policy{Version: fscrypt.PolicyV1, ContentsMode: 9, FilenamesMode: 9, Flags: 0x04, Descriptor: [8]byte{1}}
	if err := fscrypt.IoctlSetPolicy(task, user, v1dir, p1.Marshal()); err != nil {
		t.Fatalf("set v1: %v", err)
	}
	got := make([]byte, 12)
	if err := fscrypt.IoctlGetPolicy(task, v1dir, got); err != nil || !bytes.Equal(got, p1.Marshal()) {
		t.Errorf("get v1 = %x, %v", got, err)
	}
	if !task.K.Log.Contains("is setting deprecated v1 encryption policy") {
		t.Error("no v1 deprecation warning")
	}
}

// TestHasPermittedContext follows kernel-facts.md's rules.
func TestHasPermittedContext(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bytes.Repeat([]byte{3}, 64))
	p := v2Policy(id, 0)
	q := v2Policy(id, 1)
	mk := func(mode uint32, pol *fscrypt.Policy) *bare.Inode {
		i := sb.NewInode(0, mode)
		if pol != nil {
			c := fscrypt.Context{Policy: *pol}
			i.SetRawContext(c.Marshal())
		}
		return i
	}
	plainDir := mk(fscrypt.SIFDIR, nil)
	encDir := mk(fscrypt.SIFDIR, &p)
	encFile := mk(fscrypt.SIFREG, &p)
	otherFile := mk(fscrypt.SIFREG, &q)
	plainFile := mk(fscrypt.SIFREG, nil)
	fifo := mk(0o010000, nil)
	corruptA := mk(fscrypt.SIFDIR, nil)
	corruptA.SetRawContext([]byte{7})
	corruptB := mk(fscrypt.SIFREG, nil)
	corruptB.SetRawContext([]byte{7, 7})
	for _, tc := range []struct {
		parent, child *bare.Inode
		want          bool
	}{
		{plainDir, plainFile, true},
		{plainDir, encFile, true},
		{encDir, fifo, true},
		{encDir, plainFile, false},
		{encDir, encFile, true},
		{encDir, otherFile, false},
		{corruptA, corruptB, true},
		{corruptA, encFile, false},
	} {
		if got := fscrypt.HasPermittedContext(task, tc.parent, tc.child); got != tc.want {
			t.Errorf("HasPermittedContext(%s, %s) = %t, want %t", tc.parent, tc.child, got, tc.want)
		}
	}
	// With the keys set up, the cached policies are compared.
	if err := fscrypt.GetEncryptionInfo(task, encDir, false); err != nil || !fscrypt.HasEncryptionKey(encDir) {
		t.Fatal(err)
	}
	if !fscrypt.HasPermittedContext(task, encDir, encFile) || fscrypt.HasPermittedContext(task, encDir, otherFile) {
		t.Error("cached policy comparison")
	}
}
