package vfs

import (
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// fscrypt ioctl numbers (include/uapi/linux/fscrypt.h): _IOR/_IOW/_IOWR('f',
// nr, size) with the sizes of the uapi structs.
const (
	FS_IOC_SET_ENCRYPTION_POLICY           = 0x800c6613
	FS_IOC_GET_ENCRYPTION_PWSALT           = 0x40106614
	FS_IOC_GET_ENCRYPTION_POLICY           = 0x400c6615
	FS_IOC_GET_ENCRYPTION_POLICY_EX        = 0xc0096616
	FS_IOC_ADD_ENCRYPTION_KEY              = 0xc0506617
	FS_IOC_REMOVE_ENCRYPTION_KEY           = 0xc0406618
	FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS = 0xc0406619
	FS_IOC_GET_ENCRYPTION_KEY_STATUS       = 0xc080661a
	FS_IOC_GET_ENCRYPTION_NONCE            = 0x8010661b
)

// Inode attribute flag ioctls (include/uapi/linux/fs.h, x86-64 numbers:
// _IOR('f', 1, long) and _IOW('f', 2, long), whose argument is a *uint32
// in the model) and the flags the model's filesystems report or set.
const (
	FS_IOC_GETFLAGS = 0x80086601
	FS_IOC_SETFLAGS = 0x40086602

	FS_ENCRYPT_FL     = 0x00000800
	FS_INDEX_FL       = 0x00001000
	FS_INLINE_DATA_FL = 0x10000000
	FS_CASEFOLD_FL    = 0x40000000
)

// FlagsOperations are a filesystem's ->fileattr_get and ->fileattr_set,
// reduced to the FS_*_FL flags.
type FlagsOperations interface {
	// GetFlags returns inode's flags.
	GetFlags(t *kernel.Task, inode *Inode) uint32
	// SetFlags sets inode's flags.
	SetFlags(t *kernel.Task, inode *Inode, flags uint32) error
}

// IoctlFlags is ioctl_getflags and ioctl_setflags (fs/ioctl.c):
// FS_IOC_GETFLAGS and FS_IOC_SETFLAGS through the filesystem's ops (EFAULT
// for an argument that is not a *uint32). It reports handled=false for
// other commands. The model's VFS has no fileattr layer, so a filesystem
// calls it from its ->unlocked_ioctl, as ext4 and f2fs did before Linux
// 5.13.
func IoctlFlags(t *kernel.Task, f *File, cmd uint32, arg any, ops FlagsOperations) (handled bool, ret int, err error) {
	switch cmd {
	case FS_IOC_GETFLAGS:
		p, ok := arg.(*uint32)
		if !ok {
			return true, 0, errno.EFAULT
		}
		*p = ops.GetFlags(t, f.inode)
		return true, 0, nil
	case FS_IOC_SETFLAGS:
		p, ok := arg.(*uint32)
		if !ok {
			return true, 0, errno.EFAULT
		}
		// ioctl_setflags: mnt_want_write_file.
		if err := mntWantWrite(f.path.Mnt); err != nil {
			return true, 0, err
		}
		return true, 0, ops.SetFlags(t, f.inode, *p)
	}
	return false, 0, nil
}

// Ioctl is ioctl(2): the command goes to the file's ->unlocked_ioctl
// (vfs_ioctl). The argument's Go type depends on the command: for the
// fscrypt ioctls, []byte for the policy commands (the user buffer),
// *[16]byte for FS_IOC_GET_ENCRYPTION_NONCE, *fscrypt.AddKeyArg,
// *fscrypt.RemoveKeyArg and *fscrypt.GetKeyStatusArg for the key
// commands. Errors: EBADF, ENOTTY (unknown command), EFAULT (wrong
// argument type), and the command's errors.
func (p *Proc) Ioctl(t *kernel.Task, fd int, cmd uint32, arg any) (ret int, err error) {
	defer t.Recover(&err)
	defer t.Trace("do_vfs_ioctl")()
	t.Inc(EvSyscall)
	f, err := p.fdget(fd)
	if err != nil {
		return 0, err
	}
	defer f.fput(t)
	// do_vfs_ioctl handles the generic commands before the filesystem's
	// ->unlocked_ioctl.
	if cmd == FS_IOC_FIEMAP {
		return ioctlFiemap(t, f, arg)
	}
	return f.Op.UnlockedIoctl(t, f, cmd, arg)
}

// FscryptIoctl dispatches the fscrypt ioctls to package fscrypt's
// handlers, as ext4_ioctl and f2fs_ioctl do, from a filesystem's
// UnlockedIoctl. On a superblock without fscrypt operations (a filesystem
// made without the encrypt feature) they are EOPNOTSUPP, as the kernel's
// filesystems answer when ext4_has_feature_encrypt or f2fs_sb_has_encrypt
// is false. It reports handled=false for other commands. The credentials
// are the opener's (f_cred).
func FscryptIoctl(t *kernel.Task, f *File, cmd uint32, arg any) (handled bool, ret int, err error) {
	inode := f.inode
	sb := inode.sb
	cred := f.cred
	if cred == nil {
		cred = kernel.RootCred
	}
	if sb.cop == nil {
		switch cmd {
		case FS_IOC_SET_ENCRYPTION_POLICY, FS_IOC_GET_ENCRYPTION_POLICY,
			FS_IOC_GET_ENCRYPTION_POLICY_EX, FS_IOC_GET_ENCRYPTION_NONCE,
			FS_IOC_ADD_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY,
			FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS, FS_IOC_GET_ENCRYPTION_KEY_STATUS:
			return true, 0, errno.EOPNOTSUPP
		}
		return false, 0, nil
	}
	switch cmd {
	case FS_IOC_SET_ENCRYPTION_POLICY:
		b, ok := arg.([]byte)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_set_policy")()
		// mnt_want_write_file (checked before the policy's arguments
		// here; the kernel checks them first).
		if err := mntWantWrite(f.path.Mnt); err != nil {
			return true, 0, err
		}
		inode.Rwsem.Lock()
		defer inode.Rwsem.Unlock()
		return true, 0, fscrypt.IoctlSetPolicy(t, cred, inode, b)
	case FS_IOC_GET_ENCRYPTION_POLICY:
		b, ok := arg.([]byte)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_get_policy")()
		return true, 0, fscrypt.IoctlGetPolicy(t, inode, b)
	case FS_IOC_GET_ENCRYPTION_POLICY_EX:
		b, ok := arg.([]byte)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_get_policy_ex")()
		return true, 0, fscrypt.IoctlGetPolicyEx(t, inode, b)
	case FS_IOC_GET_ENCRYPTION_NONCE:
		out, ok := arg.(*[fscrypt.FileNonceSize]byte)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_get_nonce")()
		n, err := fscrypt.IoctlGetNonce(t, inode)
		if err == nil {
			*out = n
		}
		return true, 0, err
	case FS_IOC_ADD_ENCRYPTION_KEY:
		a, ok := arg.(*fscrypt.AddKeyArg)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_add_key")()
		return true, 0, fscrypt.IoctlAddKey(t, cred, sb, a)
	case FS_IOC_REMOVE_ENCRYPTION_KEY, FS_IOC_REMOVE_ENCRYPTION_KEY_ALL_USERS:
		a, ok := arg.(*fscrypt.RemoveKeyArg)
		if !ok {
			return true, 0, errno.EFAULT
		}
		if cmd == FS_IOC_REMOVE_ENCRYPTION_KEY {
			defer t.Trace("fscrypt_ioctl_remove_key")()
			return true, 0, fscrypt.IoctlRemoveKey(t, cred, sb, a)
		}
		defer t.Trace("fscrypt_ioctl_remove_key_all_users")()
		return true, 0, fscrypt.IoctlRemoveKeyAllUsers(t, cred, sb, a)
	case FS_IOC_GET_ENCRYPTION_KEY_STATUS:
		a, ok := arg.(*fscrypt.GetKeyStatusArg)
		if !ok {
			return true, 0, errno.EFAULT
		}
		defer t.Trace("fscrypt_ioctl_get_key_status")()
		return true, 0, fscrypt.IoctlGetKeyStatus(t, cred, sb, a)
	}
	return false, 0, nil
}

// AddEncryptionKey adds a v2 master key to the filesystem of the open file
// fd (FS_IOC_ADD_ENCRYPTION_KEY) and returns its identifier, as
// `fscryptctl add_key` does.
func (p *Proc) AddEncryptionKey(t *kernel.Task, fd int, raw []byte) ([fscrypt.KeyIdentifierSize]byte, error) {
	arg := &fscrypt.AddKeyArg{RawSize: uint32(len(raw)), Raw: raw}
	arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
	var id [fscrypt.KeyIdentifierSize]byte
	if _, err := p.Ioctl(t, fd, FS_IOC_ADD_ENCRYPTION_KEY, arg); err != nil {
		return id, err
	}
	copy(id[:], arg.KeySpec.U[:])
	return id, nil
}

// RemoveEncryptionKey removes the caller's claim to the v2 key id
// (FS_IOC_REMOVE_ENCRYPTION_KEY) and returns the removal status flags.
func (p *Proc) RemoveEncryptionKey(t *kernel.Task, fd int, id [fscrypt.KeyIdentifierSize]byte) (uint32, error) {
	arg := &fscrypt.RemoveKeyArg{KeySpec: fscrypt.IdentifierSpec(id)}
	_, err := p.Ioctl(t, fd, FS_IOC_REMOVE_ENCRYPTION_KEY, arg)
	return arg.RemovalStatusFlags, err
}

// KeyStatus returns the status of the v2 key id
// (FS_IOC_GET_ENCRYPTION_KEY_STATUS): fscrypt.KeyStatusAbsent, Present or
// IncompletelyRemoved.
func (p *Proc) KeyStatus(t *kernel.Task, fd int, id [fscrypt.KeyIdentifierSize]byte) (uint32, error) {
	arg := &fscrypt.GetKeyStatusArg{KeySpec: fscrypt.IdentifierSpec(id)}
	_, err := p.Ioctl(t, fd, FS_IOC_GET_ENCRYPTION_KEY_STATUS, arg)
	return arg.Status, err
}

// SetEncryptionPolicy sets pol on the empty directory fd
// (FS_IOC_SET_ENCRYPTION_POLICY), as `fscryptctl set_policy` does.
func (p *Proc) SetEncryptionPolicy(t *kernel.Task, fd int, pol fscrypt.Policy) error {
	_, err := p.Ioctl(t, fd, FS_IOC_SET_ENCRYPTION_POLICY, pol.Marshal())
	return err
}

// EncryptDir opens the empty directory path, adds the v2 key raw to its
// filesystem and sets a v2 policy with the given modes (AES-256-XTS and
// AES-256-CTS-CBC when zero) on it: the usual setup of an encrypted
// directory in one call. It returns the key identifier.
func (p *Proc) EncryptDir(t *kernel.Task, path string, raw []byte, contents, filenames uint8) ([fscrypt.KeyIdentifierSize]byte, error) {
	var id [fscrypt.KeyIdentifierSize]byte
	fd, err := p.Open(t, path, O_RDONLY|O_DIRECTORY, 0)
	if err != nil {
		return id, err
	}
	defer p.Close(t, fd)
	if id, err = p.AddEncryptionKey(t, fd, raw); err != nil {
		return id, err
	}
	if contents == 0 {
		contents, filenames = fscrypt.ModeAES256XTS, fscrypt.ModeAES256CTS
	}
	pol := fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: contents, FilenamesMode: filenames,
		Flags: fscrypt.PolicyFlagsPad32, Identifier: id}
	return id, p.SetEncryptionPolicy(t, fd, pol)
}
