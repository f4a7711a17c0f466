package fscrypt

import (
	"bytes"
	"crypto/sha256"

	"github.com/dchest/siphash"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// Allocation sites of fs/crypto/fname.c.
var (
	siteSetupFilename  = kmem.NewSite("fscrypt_setup_filename:crypto_buf")
	siteFnameAllocBuf  = kmem.NewSite("fscrypt_fname_alloc_buffer")
	siteEncryptSymlink = kmem.NewSite("fscrypt_encrypt_symlink:sd")
)

// IsDotDotdot reports whether name is "." or "..", which are never
// encrypted (is_dot_dotdot).
func IsDotDotdot(name []byte) bool {
	return (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.')
}

// FnameEncryptedSizePolicy is __fscrypt_fname_encrypted_size: the on-disk
// length of a name of origLen bytes under p, min(roundup(max(origLen, 16),
// padding), maxLen); ok is false when origLen exceeds maxLen.
func FnameEncryptedSizePolicy(p *Policy, origLen, maxLen int) (n int, ok bool) {
	if origLen > maxLen {
		return 0, false
	}
	pad := p.PaddingBytes()
	n = max(origLen, fnameMinMsgLen)
	n = (n + pad - 1) / pad * pad
	return min(n, maxLen), true
}

// FnameEncryptedSize is fscrypt_fname_encrypted_size for an inode whose key
// is set up.
func FnameEncryptedSize(inode Inode, origLen, maxLen int) (int, bool) {
	return FnameEncryptedSizePolicy(&inode.CryptInfo().policy, origLen, maxLen)
}

// FnameEncrypt is fscrypt_fname_encrypt: encrypt iname into out, whose
// length is the encrypted size (at least len(iname); the rest is NUL
// padding), with inode's key (a directory's, or a symlink's for its
// target). How the request is allocated depends on the
// fscrypt-fname-onstack variant: an allocated request and a wait, freed
// (base); as seed 000 v2 posted it, an on-stack request declared and
// BUG_ON-checked but unused, then the same allocated request and wait,
// never freed (v2 leaks one request per call: see cryptSeedEncrypt); or a
// sync on-stack request (upstream). Errors: ENOBUFS (out too short),
// ENOMEM (base and v2), and driver errors; v2 raises a kernel BUG with a
// driver whose request context exceeds 384 bytes.
func FnameEncrypt(t *kernel.Task, inode Inode, iname, out []byte) error {
	defer t.Trace("fscrypt_fname_encrypt")()
	ci := inode.CryptInfo()
	if t.WarnOn(len(out) < len(iname), "olen < iname->len") {
		return errENOBUFS
	}
	copy(out, iname)
	clear(out[len(iname):])
	var iv fscryptIV
	generateIV(&iv, 0, ci)
	t.Inc(EvFnameEncrypt)
	err := fnameCrypt(t, inode, ci, true, out, out, iv.bytes[:ci.mode.IVSize])
	if err != nil {
		fscryptErr(t, inode, "Filename encryption failed: %d", -errnoValue(err))
	}
	return err
}

// fnameDecrypt is fs/crypto/fname.c fname_decrypt: decrypt iname into oname
// (len(oname) >= len(iname)) and return the plaintext length, which stops
// at the first NUL. The request is allocated and freed (base), on the
// stack with seed 000's BUG_ON and a wait (v2: an asynchronous driver that
// fits is handed the on-stack request), or a sync on-stack request
// (upstream).
func fnameDecrypt(t *kernel.Task, inode Inode, iname, oname []byte) (int, error) {
	ci := inode.CryptInfo()
	var iv fscryptIV
	generateIV(&iv, 0, ci)
	t.Inc(EvFnameDecrypt)
	dst := oname[:len(iname)]
	if err := fnameCrypt(t, inode, ci, false, dst, iname, iv.bytes[:ci.mode.IVSize]); err != nil {
		fscryptErr(t, inode, "Filename decryption failed: %d", -errnoValue(err))
		return 0, err
	}
	if i := bytes.IndexByte(dst, 0); i >= 0 {
		return i, nil
	}
	return len(iname), nil
}

// FnameAllocBuffer is fscrypt_fname_alloc_buffer: a kmalloc'd buffer able to
// hold any presented name (decrypted, or no-key encoded) for encrypted
// names up to maxEncryptedLen bytes, plus a NUL. Free it with
// FnameFreeBuffer. Errors: ENOMEM.
func FnameAllocBuffer(t *kernel.Task, maxEncryptedLen int) ([]byte, error) {
	n := max(NokeyNameMaxEncoded, maxEncryptedLen)
	return t.Kmalloc(siteFnameAllocBuf, n+1, kmem.GFPNoFS)
}

// FnameFreeBuffer is fscrypt_fname_free_buffer.
func FnameFreeBuffer(t *kernel.Task, buf []byte) { t.Kfree(siteFnameAllocBuf, buf) }

// FnameDiskToUsr is fscrypt_fname_disk_to_usr: convert an on-disk name of
// inode (a directory, or a symlink's target) to what userspace sees,
// written to oname (from FnameAllocBuffer) and returning its length. "." and
// ".." pass through; with the key the name is decrypted, without it the
// no-key name is encoded with the given dirhash. Errors: EUCLEAN for an
// on-disk name shorter than 16 bytes, ENOMEM, driver errors.
func FnameDiskToUsr(t *kernel.Task, inode Inode, hash, minorHash uint32, iname, oname []byte) (int, error) {
	defer t.Trace("fscrypt_fname_disk_to_usr")()
	if IsDotDotdot(iname) {
		oname[0] = '.'
		oname[len(iname)-1] = '.'
		return len(iname), nil
	}
	if len(iname) < fnameMinMsgLen {
		t.Inc(EvFnameTooShort)
		return 0, errno.EUCLEAN
	}
	if HasEncryptionKey(inode) {
		return fnameDecrypt(t, inode, iname, oname)
	}
	t.Inc(EvNokeyEncode)
	out := EncodeNokeyName(oname[:0], hash, minorHash, iname)
	return len(out), nil
}

// Name is struct fscrypt_name: a user-supplied name prepared for searching
// a possibly encrypted directory.
type Name struct {
	// UsrFname is the name as the user gave it.
	UsrFname []byte
	// DiskName is the name as stored on disk, or nil for a long no-key
	// name, which MatchName matches through its SHA-256.
	DiskName []byte
	// Hash and MinorHash are the dirhash carried by a no-key name.
	Hash, MinorHash uint32
	// CryptoBuf is the kmalloc'd buffer behind DiskName (crypto_buf).
	CryptoBuf []byte
	// IsNokeyName reports that the name was decoded from a no-key name.
	IsNokeyName bool
	nokey       NokeyName
}

// SetupFilename is fscrypt_setup_filename: prepare iname for a lookup in
// dir (lookup true: a no-key name is accepted without the key) or for a
// creation (lookup false: ENOKEY without the key). Call FreeFilename
// afterwards. Errors: ENAMETOOLONG, ENOKEY, ENOENT (malformed no-key name),
// ENOMEM, key setup and driver errors.
func SetupFilename(t *kernel.Task, dir Inode, iname []byte, lookup bool, fname *Name) error {
	defer t.Trace("fscrypt_setup_filename")()
	*fname = Name{UsrFname: iname}
	if !dir.IsEncrypted() || IsDotDotdot(iname) {
		fname.DiskName = iname
		return nil
	}
	if err := GetEncryptionInfo(t, dir, lookup); err != nil {
		return err
	}
	if HasEncryptionKey(dir) {
		n, ok := FnameEncryptedSize(dir, len(iname), nameMax)
		if !ok {
			return errno.ENAMETOOLONG
		}
		buf, err := t.Kmalloc(siteSetupFilename, n, kmem.GFPNoFS)
		if err != nil {
			return err
		}
		if err := FnameEncrypt(t, dir, iname, buf); err != nil {
			t.Kfree(siteSetupFilename, buf)
			return err
		}
		fname.CryptoBuf = buf
		fname.DiskName = buf
		return nil
	}
	if !lookup {
		return errno.ENOKEY
	}
	fname.IsNokeyName = true
	t.Inc(EvNokeyDecode)
	if len(iname) > NokeyNameMaxEncoded {
		return errno.ENOENT
	}
	buf, err := t.Kmalloc(siteSetupFilename, NokeyNameMax, kmem.GFPKernel)
	if err != nil {
		return err
	}
	nk, err := DecodeNokeyName(iname)
	if err != nil {
		t.Kfree(siteSetupFilename, buf)
		return err
	}
	fname.CryptoBuf = buf
	fname.nokey = nk
	fname.Hash, fname.MinorHash = nk.Hash, nk.MinorHash
	if !nk.Digested {
		n := copy(buf, nk.Bytes)
		fname.DiskName = buf[:n]
	}
	return nil
}

// FreeFilename is fscrypt_free_filename.
func FreeFilename(t *kernel.Task, fname *Name) {
	t.Kfree(siteSetupFilename, fname.CryptoBuf)
	fname.CryptoBuf = nil
	fname.DiskName = nil
}

// MatchName is fscrypt_match_name: whether the directory entry deName is the
// name searched for. Normally a byte comparison with DiskName; for a long
// no-key name, the first 149 bytes and the SHA-256 of the rest.
func MatchName(fname *Name, deName []byte) bool {
	if fname.DiskName != nil {
		return bytes.Equal(deName, fname.DiskName)
	}
	if len(deName) <= NokeyNameBytes {
		return false
	}
	if !bytes.Equal(deName[:NokeyNameBytes], fname.nokey.Bytes) {
		return false
	}
	return sha256.Sum256(deName[NokeyNameBytes:]) == fname.nokey.SHA256
}

// FnameSiphash is fscrypt_fname_siphash: the SipHash-2-4 of a plaintext name
// under dir's dirhash key (set up for casefolded encrypted directories).
func FnameSiphash(t *kernel.Task, dir Inode, name []byte) uint64 {
	ci := dir.CryptInfo()
	t.WarnOn(!ci.dirhashKeyInitialized, "!ci->ci_dirhash_key_initialized")
	return siphash.Hash(ci.dirhashKey[0], ci.dirhashKey[1], name)
}

// DirhashKey returns dir's dirhash key as the 16 bytes HKDF produced, and
// whether it is set up.
func DirhashKey(dir Inode) ([16]byte, bool) {
	var b [16]byte
	ci := dir.CryptInfo()
	if ci == nil || !ci.dirhashKeyInitialized {
		return b, false
	}
	putLE64(b[0:], ci.dirhashKey[0])
	putLE64(b[8:], ci.dirhashKey[1])
	return b, true
}

// DRevalidate is the decision of fscrypt_d_revalidate for a dentry in dir:
// a plaintext name is always valid; a no-key name (DCACHE_NOKEY_NAME) stays
// valid only while dir's key is still unavailable, so that adding the key
// makes lookups find the plaintext names. The VFS returns -ECHILD in RCU
// mode before calling it (key setup may sleep). Errors: those of
// GetEncryptionInfo (with unsupported policies tolerated).
func DRevalidate(t *kernel.Task, dir Inode, isNokeyName bool) (bool, error) {
	if !isNokeyName {
		return true, nil
	}
	if err := GetEncryptionInfo(t, dir, true); err != nil {
		return false, err
	}
	return !HasEncryptionKey(dir), nil
}
