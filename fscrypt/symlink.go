package fscrypt

import (
	"bytes"
	"encoding/binary"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// symlinkDataHeader is sizeof(struct fscrypt_symlink_data): the le16
// ciphertext length before the encrypted target.
const symlinkDataHeader = 2

// PrepareSymlink is fscrypt_prepare_symlink: compute the on-disk size of a
// symlink target of len(target) bytes created in dir, checked against
// maxLen (the room the filesystem has, counting a NUL). For an unencrypted
// dir encrypted is false and the size is len+1. Errors: ENAMETOOLONG,
// ENOKEY (dir's key unavailable), key setup errors.
func PrepareSymlink(t *kernel.Task, dir Inode, target []byte, maxLen int) (diskLen int, encrypted bool, err error) {
	p, err := policyToInherit(t, dir)
	if err != nil {
		return 0, false, err
	}
	if p == nil {
		if len(target)+1 > maxLen {
			return 0, false, errno.ENAMETOOLONG
		}
		return len(target) + 1, false, nil
	}
	n, ok := FnameEncryptedSizePolicy(p, len(target), maxLen-symlinkDataHeader-1)
	if !ok {
		return 0, true, errno.ENAMETOOLONG
	}
	return n + symlinkDataHeader + 1, true, nil
}

// EncryptSymlink is __fscrypt_encrypt_symlink: the on-disk target of a new
// encrypted symlink inode (whose key PrepareNewInode set up) of diskLen
// bytes from PrepareSymlink: le16 ciphertext length, the ciphertext, a NUL.
// The result is kmalloc'd (free it with FreeSymlinkData). Errors: ENOKEY,
// ENOMEM, driver errors.
func EncryptSymlink(t *kernel.Task, inode Inode, target []byte, diskLen int) ([]byte, error) {
	defer t.Trace("__fscrypt_encrypt_symlink")()
	if t.WarnOn(!HasEncryptionKey(inode), "!fscrypt_has_encryption_key(inode)") {
		return nil, errno.ENOKEY
	}
	sd, err := t.Kmalloc(siteEncryptSymlink, diskLen, kmem.GFPNoFS)
	if err != nil {
		return nil, err
	}
	ctLen := diskLen - symlinkDataHeader - 1
	binary.LittleEndian.PutUint16(sd, uint16(ctLen))
	if err := FnameEncrypt(t, inode, target, sd[symlinkDataHeader:symlinkDataHeader+ctLen]); err != nil {
		t.Kfree(siteEncryptSymlink, sd)
		return nil, err
	}
	sd[symlinkDataHeader+ctLen] = 0
	return sd, nil
}

// FreeSymlinkData frees what EncryptSymlink returned.
func FreeSymlinkData(t *kernel.Task, sd []byte) { t.Kfree(siteEncryptSymlink, sd) }

// GetSymlink is fscrypt_get_symlink: the target userspace sees for an
// encrypted symlink whose on-disk contents are caddr: decrypted with the
// key, no-key encoded without it. cacheable reports that the result was
// decrypted (the kernel caches it in i_link; no-key targets are not cached).
// Errors: EUCLEAN (corrupt target), EINVAL (not encrypted), ENOMEM, key
// setup and driver errors.
func GetSymlink(t *kernel.Task, inode Inode, caddr []byte) (target []byte, cacheable bool, err error) {
	defer t.Trace("fscrypt_get_symlink")()
	if t.WarnOn(!inode.IsEncrypted(), "!IS_ENCRYPTED(inode)") {
		return nil, false, errno.EINVAL
	}
	if err := GetEncryptionInfo(t, inode, false); err != nil {
		return nil, false, err
	}
	hasKey := HasEncryptionKey(inode)
	if len(caddr) < symlinkDataHeader+1 {
		return nil, false, errno.EUCLEAN
	}
	ctLen := int(binary.LittleEndian.Uint16(caddr))
	if ctLen == 0 || ctLen+symlinkDataHeader > len(caddr) {
		return nil, false, errno.EUCLEAN
	}
	cstr := caddr[symlinkDataHeader : symlinkDataHeader+ctLen]
	pstr, err := FnameAllocBuffer(t, ctLen)
	if err != nil {
		return nil, false, err
	}
	defer FnameFreeBuffer(t, pstr)
	n, err := FnameDiskToUsr(t, inode, 0, 0, cstr, pstr)
	if err != nil {
		return nil, false, err
	}
	if n == 0 || pstr[0] == 0 {
		return nil, false, errno.EUCLEAN
	}
	return bytes.Clone(pstr[:n]), hasKey, nil
}
