package fscrypt

import (
	"encoding/binary"
	"math/bits"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// supportedDirectKeyModes is fs/crypto/policy.c supported_direct_key_modes.
func supportedDirectKeyModes(t *kernel.Task, inode Inode, contents, filenames uint8) bool {
	if contents != filenames {
		warn(t, inode, "Direct key flag not allowed with different contents and filenames modes")
		return false
	}
	m := ModeByNum(int(contents))
	if m.IVSize < directKeyMinIVSize {
		warn(t, inode, "Direct key flag not allowed with %s", m.FriendlyName)
		return false
	}
	return true
}

// maxFileDunBits is fscrypt_max_file_dun_bits: how many bits a data unit
// index within a file can take, fls64(s_maxbytes - 1) - du_bits.
func maxFileDunBits(sb SuperBlock, duBits int) int {
	return bits.Len64(uint64(sb.MaxBytes()-1)) - duBits
}

// supportedIVInoLblkPolicy is fs/crypto/policy.c
// supported_iv_ino_lblk_policy.
func supportedIVInoLblkPolicy(t *kernel.Task, p *Policy, inode Inode) bool {
	typ := "IV_INO_LBLK_32"
	if p.Flags&PolicyFlagIVInoLblk64 != 0 {
		typ = "IV_INO_LBLK_64"
	}
	sb := inode.SuperBlock()
	if p.ContentsMode != ModeAES256XTS {
		warn(t, inode, "Can't use %s policy with contents mode other than AES-256-XTS", typ)
		return false
	}
	if !sb.Cop().HasStableInodes() {
		warn(t, inode, "Can't use %s policy on filesystem '%s' because it doesn't have stable inode numbers", typ, sb.ID())
		return false
	}
	// IV_INO_LBLK_32 hashes the inode number but takes it from i_ino, so
	// both forms need 32-bit inode numbers.
	if !sb.Cop().Has32BitInodes() {
		warn(t, inode, "Can't use %s policy on filesystem '%s' because its inode numbers are too long", typ, sb.ID())
		return false
	}
	if maxFileDunBits(sb, policyDuBits(p, inode)) > 32 {
		warn(t, inode, "Can't use %s policy on filesystem '%s' because its maximum file size is too large", typ, sb.ID())
		return false
	}
	return true
}

// policyDuBits is fscrypt_policy_du_bits: log2 of the data unit size.
func policyDuBits(p *Policy, inode Inode) int {
	if p.Version == PolicyV2 && p.Log2DataUnitSize != 0 {
		return int(p.Log2DataUnitSize)
	}
	return int(inode.Blkbits())
}

func supportedV1Policy(t *kernel.Task, p *Policy, inode Inode) bool {
	if !validEncModesV1(p.ContentsMode, p.FilenamesMode) {
		warn(t, inode, "Unsupported encryption modes (contents %d, filenames %d)", p.ContentsMode, p.FilenamesMode)
		return false
	}
	if p.Flags&^(PolicyFlagsPadMask|PolicyFlagDirectKey) != 0 {
		warn(t, inode, "Unsupported encryption flags (0x%02x)", p.Flags)
		return false
	}
	if p.Flags&PolicyFlagDirectKey != 0 && !supportedDirectKeyModes(t, inode, p.ContentsMode, p.FilenamesMode) {
		return false
	}
	if inode.IsCasefolded() {
		warn(t, inode, "v1 policies can't be used on casefolded directories")
		return false
	}
	return true
}

func supportedV2Policy(t *kernel.Task, p *Policy, inode Inode) bool {
	if !validEncModesV2(p.ContentsMode, p.FilenamesMode) {
		warn(t, inode, "Unsupported encryption modes (contents %d, filenames %d)", p.ContentsMode, p.FilenamesMode)
		return false
	}
	if p.Flags&^(PolicyFlagsPadMask|PolicyFlagDirectKey|PolicyFlagIVInoLblk64|PolicyFlagIVInoLblk32) != 0 {
		warn(t, inode, "Unsupported encryption flags (0x%02x)", p.Flags)
		return false
	}
	count := 0
	for _, f := range []uint8{PolicyFlagDirectKey, PolicyFlagIVInoLblk64, PolicyFlagIVInoLblk32} {
		if p.Flags&f != 0 {
			count++
		}
	}
	if count > 1 {
		warn(t, inode, "Mutually exclusive encryption flags (0x%02x)", p.Flags)
		return false
	}
	if p.Log2DataUnitSize != 0 {
		if !inode.SuperBlock().Cop().SupportsSubblockDataUnits() {
			warn(t, inode, "Filesystem does not support configuring crypto data unit size")
			return false
		}
		if p.Log2DataUnitSize > inode.Blkbits() || p.Log2DataUnitSize < sectorShift {
			warn(t, inode, "Unsupported log2_data_unit_size in encryption policy: %d", p.Log2DataUnitSize)
			return false
		}
		if p.Log2DataUnitSize != inode.Blkbits() && p.Flags&PolicyFlagIVInoLblk32 != 0 {
			warn(t, inode, "Sub-block data units not yet supported with IV_INO_LBLK_32")
			return false
		}
	}
	if p.Flags&PolicyFlagDirectKey != 0 && !supportedDirectKeyModes(t, inode, p.ContentsMode, p.FilenamesMode) {
		return false
	}
	if p.Flags&(PolicyFlagIVInoLblk64|PolicyFlagIVInoLblk32) != 0 && !supportedIVInoLblkPolicy(t, p, inode) {
		return false
	}
	if p.Reserved != [3]byte{} {
		warn(t, inode, "Reserved bits set in encryption policy")
		return false
	}
	return true
}

// SupportedPolicy is fscrypt_supported_policy: whether the kernel can use p
// on inode (modes, flags, data unit size and the filesystem's limits). Each
// rejection is logged as the kernel does.
func SupportedPolicy(t *kernel.Task, p *Policy, inode Inode) bool {
	switch p.Version {
	case PolicyV1:
		return supportedV1Policy(t, p, inode)
	case PolicyV2:
		return supportedV2Policy(t, p, inode)
	}
	return false
}

// GetPolicy is fscrypt_get_policy: the inode's policy from its set-up key
// if any, else from its stored context. Errors: ENODATA for an unencrypted
// inode, EINVAL for a context that does not parse (or ERANGE from the
// filesystem), others from ->get_context.
func GetPolicy(t *kernel.Task, inode Inode) (Policy, error) {
	if ci := inode.CryptInfo(); ci != nil {
		return ci.policy, nil
	}
	if !inode.IsEncrypted() {
		return Policy{}, errno.ENODATA
	}
	var buf [MaxContextSize]byte
	n, err := inode.SuperBlock().Cop().GetContext(t, inode, buf[:])
	if err != nil {
		if err == errno.ERANGE {
			return Policy{}, errno.EINVAL
		}
		return Policy{}, err
	}
	ctx, err := ParseContext(buf[:n])
	if err != nil {
		return Policy{}, err
	}
	return ctx.Policy, nil
}

// The pr_warn_once sites of set_encryption_policy.
var (
	warnV1Policy    = kernel.NewOnceSite()
	warnIVInoLblk32 = kernel.NewOnceSite()
)

// setEncryptionPolicy is fs/crypto/policy.c set_encryption_policy. Its
// warnings, of a deprecated v1 policy and of an IV_INO_LBLK_32 one, are
// pr_warn_once: once per boot.
func setEncryptionPolicy(t *kernel.Task, cred *kernel.Cred, inode Inode, p *Policy) error {
	if !SupportedPolicy(t, p, inode) {
		return errno.EINVAL
	}
	switch p.Version {
	case PolicyV1:
		t.PrintkOnce(warnV1Policy, "%s (pid %d) is setting deprecated v1 encryption policy; recommend upgrading to v2.", t.Comm, t.PID)
	case PolicyV2:
		if err := verifyKeyAdded(t, cred, inode.SuperBlock(), p.Identifier); err != nil {
			return err
		}
		if p.Flags&PolicyFlagIVInoLblk32 != 0 {
			t.PrintkOnce(warnIVInoLblk32, "%s (pid %d) is setting an IV_INO_LBLK_32 encryption policy.  This should only be used if there are certain hardware limitations.", t.Comm, t.PID)
		}
	}
	ctx := Context{Policy: *p}
	t.K.GetRandomBytes(ctx.Nonce[:])
	return inode.SuperBlock().Cop().SetContext(t, inode, ctx.Marshal(), nil)
}

// Owner is implemented by inodes that know their owner (i_uid), for the
// inode_owner_or_capable check of FS_IOC_SET_ENCRYPTION_POLICY.
type Owner interface{ OwnerUID() uint32 }

// DeadDir is implemented by inodes that can report IS_DEADDIR (a removed
// directory).
type DeadDir interface{ IsDeadDir() bool }

// IoctlSetPolicy is fscrypt_ioctl_set_policy (FS_IOC_SET_ENCRYPTION_POLICY):
// arg is the user's buffer holding a v1 or v2 policy. The directory must be
// empty; an existing different policy gives EEXIST, an identical one 0.
// Errors: EFAULT (arg too short for its version), EINVAL (unknown version or
// unsupported policy), EACCES (not the owner), ENOTDIR, ENOENT (removed
// directory), ENOTEMPTY, EEXIST, ENOKEY (v2 key not added by the caller),
// and errors from the filesystem. The filesystem must hold the inode lock.
func IoctlSetPolicy(t *kernel.Task, cred *kernel.Cred, inode Inode, arg []byte) error {
	if len(arg) < 1 {
		return errno.EFAULT
	}
	p := Policy{Version: arg[0]}
	size := p.Size()
	if size <= 0 {
		return errno.EINVAL
	}
	if len(arg) < size {
		return errno.EFAULT
	}
	p, err := ParsePolicy(arg[:size])
	if err != nil {
		return err
	}
	if o, ok := inode.(Owner); ok && !cred.CapFowner && o.OwnerUID() != cred.UID {
		return errno.EACCES
	}
	existing, err := GetPolicy(t, inode)
	switch {
	case err == errno.ENODATA:
		if !isDir(inode) {
			return errno.ENOTDIR
		}
		if d, ok := inode.(DeadDir); ok && d.IsDeadDir() {
			return errno.ENOENT
		}
		if !inode.SuperBlock().Cop().EmptyDir(t, inode) {
			return errno.ENOTEMPTY
		}
		return setEncryptionPolicy(t, cred, inode, &p)
	case err == errno.EINVAL || (err == nil && !p.Equal(&existing)):
		return errno.EEXIST
	}
	return err
}

// IoctlGetPolicy is fscrypt_ioctl_get_policy (FS_IOC_GET_ENCRYPTION_POLICY,
// v1 only): it writes the 12-byte v1 policy into arg. Errors: ENODATA
// (unencrypted), EINVAL (not a v1 policy, or a bad context), EFAULT (arg
// shorter than 12 bytes).
func IoctlGetPolicy(t *kernel.Task, inode Inode, arg []byte) error {
	p, err := GetPolicy(t, inode)
	if err != nil {
		return err
	}
	if p.Version != PolicyV1 {
		return errno.EINVAL
	}
	if len(arg) < PolicyV1Size {
		return errno.EFAULT
	}
	copy(arg, p.Marshal())
	return nil
}

// IoctlGetPolicyEx is fscrypt_ioctl_get_policy_ex
// (FS_IOC_GET_ENCRYPTION_POLICY_EX): arg is struct
// fscrypt_get_policy_ex_arg, a le64 policy_size (the room the caller has)
// followed by that room. On success policy_size is set to the policy's size
// and the policy copied after it. Errors: ENODATA, EINVAL, EOVERFLOW (room
// too small), EFAULT (arg shorter than it claims).
func IoctlGetPolicyEx(t *kernel.Task, inode Inode, arg []byte) error {
	if len(arg) < 8 {
		return errno.EFAULT
	}
	room := binary.LittleEndian.Uint64(arg)
	p, err := GetPolicy(t, inode)
	if err != nil {
		return err
	}
	size := uint64(p.Size())
	if size > room {
		return errno.EOVERFLOW
	}
	if uint64(len(arg)-8) < size {
		return errno.EFAULT
	}
	binary.LittleEndian.PutUint64(arg, size)
	copy(arg[8:], p.Marshal())
	return nil
}

// IoctlGetNonce is fscrypt_ioctl_get_nonce (FS_IOC_GET_ENCRYPTION_NONCE):
// the inode's 16-byte nonce. Errors: ENODATA (unencrypted), EINVAL (bad
// context), others from ->get_context.
func IoctlGetNonce(t *kernel.Task, inode Inode) ([FileNonceSize]byte, error) {
	var buf [MaxContextSize]byte
	n, err := inode.SuperBlock().Cop().GetContext(t, inode, buf[:])
	if err != nil {
		return [FileNonceSize]byte{}, err
	}
	ctx, err := ParseContext(buf[:n])
	if err != nil {
		return [FileNonceSize]byte{}, errno.EINVAL
	}
	return ctx.Nonce, nil
}

// HasPermittedContext is fscrypt_has_permitted_context: whether child may
// live in parent. Files that are never encrypted are always permitted, as
// is anything in an unencrypted parent; an unencrypted child of an
// encrypted parent is not; otherwise the two policies must be equal (two
// unrecognized policies are tolerated so that such files can be deleted).
func HasPermittedContext(t *kernel.Task, parent, child Inode) bool {
	defer t.Trace("fscrypt_has_permitted_context")()
	if !isReg(child) && !isDir(child) && !isLnk(child) {
		return true
	}
	if !parent.IsEncrypted() {
		return true
	}
	if !child.IsEncrypted() {
		return false
	}
	pp, err1 := GetPolicy(t, parent)
	cp, err2 := GetPolicy(t, child)
	if err1 == errno.EINVAL && err2 == errno.EINVAL {
		return true
	}
	if err1 != nil || err2 != nil {
		return false
	}
	return pp.Equal(&cp)
}

// policyToInherit is fs/crypto/policy.c fscrypt_policy_to_inherit: the
// policy a new inode in dir gets, nil for an unencrypted dir. Errors:
// ENOKEY when dir's key is unavailable, or a key setup error.
func policyToInherit(t *kernel.Task, dir Inode) (*Policy, error) {
	if !dir.IsEncrypted() {
		return nil, nil
	}
	if err := RequireKey(t, dir); err != nil {
		return nil, err
	}
	return &dir.CryptInfo().policy, nil
}
