package vfs

import (
	"bytes"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

// CIEncoding is what generic_ci_match needs from the superblock's Unicode
// map (sb->s_encoding): package fsunicode's *Map provides it, tests may use
// a double. A name that is not valid UTF-8 is an error (EINVAL), as the
// kernel's utf8_* functions return -EINVAL.
type CIEncoding interface {
	// StrncasecmpFolded is utf8_strncasecmp_folded(um, folded, name): 0
	// when name casefolds to folded, 1 when it does not.
	StrncasecmpFolded(folded, name []byte) (int, error)
	// Strncasecmp is utf8_strncasecmp(um, a, b): 0 when a and b casefold
	// alike, 1 when they do not.
	Strncasecmp(a, b []byte) (int, error)
}

// CINameDecrypter is what generic_ci_match needs from fscrypt for an
// encrypted parent: fscrypt_has_encryption_key(parent) and
// fscrypt_fname_disk_to_usr(parent, 0, 0, &encrypted_name, &decrypted_name).
type CINameDecrypter interface {
	// HasKey is fscrypt_has_encryption_key.
	HasKey() bool
	// DiskToUsr writes the plaintext of the on-disk name iname into oname
	// and returns its length.
	DiskToUsr(t *kernel.Task, hash, minorHash uint32, iname, oname []byte) (int, error)
}

// CIParent describes the parent directory of a generic_ci_match call: what
// the kernel function reads through parent and parent->i_sb, and which
// allocation site the caller's buffer is accounted to.
type CIParent struct {
	// Encoding is sb->s_encoding.
	Encoding CIEncoding
	// Strict is sb_has_strict_encoding(sb).
	Strict bool
	// Crypt is the parent's fscrypt name handling; nil when the parent is
	// not encrypted (IS_ENCRYPTED false).
	Crypt CINameDecrypter
	// Site is the allocation site of the per-call decryption buffer. Each
	// filesystem passes its own so that kmalloc counts stay attributed
	// to the caller ("f2fs/generic_ci_match:decrypted_name", ...).
	Site *kmem.Site
}

// DecryptedNamePreallocMinLen is DECRYPTED_NAME_PREALLOC_MIN_LEN of seed 001:
// the slack added to every prealloc buffer.
const DecryptedNamePreallocMinLen = 64

// DecryptedNamePrealloc is seed 001's struct decrypted_name_prealloc {name,
// namelen} (include/linux/fs.h as patched by "f2fs: improve the
// performance of f2fs_lookup"): a decryption buffer that a filesystem
// threads through one lookup and releases at its end (Release), so that
// generic_ci_match does not kmalloc one per compared dirent.
//
// Fixed selects the resize condition: false is the patch as posted (v2),
// whose resize helper keeps the old buffer when wantlen >= namelen, the
// inverted test that hands a too-small buffer to the decryption and
// reallocates when the old one is big enough; true is v4's wantlen <=
// namelen. Site is the allocation site of the buffer.
type DecryptedNamePrealloc struct {
	Fixed bool
	Site  *kmem.Site

	name []byte
	// freed records that generic_ci_match's error path kfree'd the buffer
	// behind the struct's back, so that reuse and the final kfree are
	// reported as KASAN would.
	freed bool
}

// resize is decrypted_name_prealloc_resize.
func (p *DecryptedNamePrealloc) resize(t *kernel.Task, wantlen int) ([]byte, error) {
	if p.name != nil {
		namelen := len(p.name)
		reuse := wantlen >= namelen
		if p.Fixed {
			reuse = wantlen <= namelen
		}
		if reuse {
			if t.Tracing() {
				t.TraceNote("decrypted_name_prealloc_resize: buffer of %d bytes reused for %d", namelen, wantlen)
			}
			if p.freed {
				kasan("KASAN: slab-use-after-free", "decrypted_name_prealloc_resize", "prealloc->name reused after kfree in generic_ci_match's error path")
			}
			return p.name, nil
		}
	}
	if t.Tracing() {
		t.TraceNote("decrypted_name_prealloc_resize: kmalloc(%d)", wantlen+DecryptedNamePreallocMinLen)
	}
	buf, err := t.Kmalloc(p.Site, wantlen+DecryptedNamePreallocMinLen, kmem.GFPKernel)
	if err != nil {
		return nil, err
	}
	p.Release(t)
	p.name = buf
	return buf, nil
}

// Release is the kfree(prealloc.name) at the end of the lookup
// (__f2fs_find_entry) and of the resize helper. A buffer that
// generic_ci_match's error path already freed is reported as a KASAN
// double free.
func (p *DecryptedNamePrealloc) Release(t *kernel.Task) {
	if p.name == nil {
		return
	}
	if p.freed {
		kasan("KASAN: double-free", "kfree", "prealloc->name freed twice (generic_ci_match's error path, then __f2fs_find_entry)")
	}
	t.Kfree(p.Site, p.name)
	p.name, p.freed = nil, false
}

// kasan raises a KASAN report that t.Recover records at the simulator
// boundary.
func kasan(kind, fn, msg string) {
	panic(&kernel.Bug{Kind: kind, Func: fn, Msg: msg, Size: -1, Offset: -1})
}

// GenericCIMatch is generic_ci_match (fs/libfs.c), shared by f2fs and ext4:
// does the on-disk name deName of a dirent in parent match the user's name
// (folded: its casefolded form, nil when it could not be folded)? It
// returns 1 for a match, 0 for none, or an error.
//
// In an encrypted parent the on-disk name is decrypted first, into a
// kmalloc'd buffer of de_name_len bytes accounted to parent.Site or, with
// seed 001, into prealloc's buffer (nil: the kernel's NULL, as ext4 and the
// base variant pass). The decryption writes de_name_len bytes, which is why
// the buffer is resliced to that length before it is handed over: a
// too-small prealloc buffer (v2's inverted check) panics there exactly
// where KASAN reports the overflowing write. A decryption error frees the
// buffer, a prealloc one included, as the patch left that path (a later
// reuse or Release reports the use after free). Then the names are
// compared exactly, then casefolded. A dirent name that is not valid UTF-8
// never matches; under strict encoding that is logged.
func GenericCIMatch(t *kernel.Task, parent *CIParent, name, folded, deName []byte, prealloc *DecryptedNamePrealloc) (int, error) {
	defer t.Trace("generic_ci_match")()
	dirent := deName
	var buf []byte
	if parent.Crypt != nil {
		if t.WarnOn(!parent.Crypt.HasKey(), "generic_ci_match: !fscrypt_has_encryption_key(parent)") {
			return 0, errno.EINVAL
		}
		var err error
		if prealloc == nil {
			if t.Tracing() {
				t.TraceNote("kmalloc(%d) for the decrypted name, freed after the compare", len(deName))
			}
			buf, err = t.Kmalloc(parent.Site, len(deName), kmem.GFPKernel)
		} else {
			buf, err = prealloc.resize(t, len(deName))
		}
		if err != nil {
			return 0, errno.ENOMEM
		}
		out := buf[:len(deName)] // the decryption writes de_name_len bytes
		n, err := parent.Crypt.DiskToUsr(t, 0, 0, deName, out)
		if err != nil {
			if prealloc == nil {
				t.Kfree(parent.Site, buf)
			} else {
				t.Kfree(prealloc.Site, buf)
				prealloc.freed = true
			}
			return 0, err
		}
		dirent = out[:n]
	}

	// Attempt a case-sensitive match first.
	res := 0
	var err error
	if !bytes.Equal(name, dirent) {
		if folded != nil {
			res, err = parent.Encoding.StrncasecmpFolded(folded, dirent)
		} else {
			res, err = parent.Encoding.Strncasecmp(name, dirent)
		}
	}
	if prealloc == nil && buf != nil {
		t.Kfree(parent.Site, buf)
	}
	if err != nil {
		if parent.Strict {
			t.Printk("Directory contains filename that is invalid UTF-8")
		}
		return 0, nil
	}
	if res == 0 {
		return 1, nil
	}
	return 0, nil
}
