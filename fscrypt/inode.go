package fscrypt

import (
	"fmt"
	"sync/atomic"

	"github.com/vfslab/vfslab/kernel"
)

// File types (include/uapi/linux/stat.h), for Inode.Mode.
const (
	SIFMT  = 0o170000
	SIFREG = 0o100000
	SIFDIR = 0o040000
	SIFLNK = 0o120000
)

// Inode is what fs/crypto needs from struct inode. package vfs implements it.
type Inode interface {
	// Ino is i_ino. It may be 0 for a new inode whose number the
	// filesystem has not assigned yet.
	Ino() uint64
	// Mode is i_mode; only the S_IFMT bits matter here.
	Mode() uint32
	// Blkbits is i_blkbits (12 for 4 KiB blocks).
	Blkbits() uint8
	// IsEncrypted is IS_ENCRYPTED(inode): S_ENCRYPTED in i_flags, which the
	// filesystem sets when it stores a context (Operations.SetContext) or
	// loads an inode that has one.
	IsEncrypted() bool
	// IsCasefolded is IS_CASEFOLDED(inode).
	IsCasefolded() bool
	// CryptInfo is fscrypt_get_inode_info: an acquire load of
	// i_crypt_info (nil when the key is not set up).
	CryptInfo() *InodeInfo
	// CasCryptInfo is the cmpxchg_release that publishes i_crypt_info:
	// it stores new if the field still holds old and reports whether it
	// did. Embedding an InfoSlot implements CryptInfo and CasCryptInfo.
	CasCryptInfo(old, new *InodeInfo) bool
	// SuperBlock is i_sb.
	SuperBlock() SuperBlock
}

// InfoSlot implements Inode's CryptInfo and CasCryptInfo with an atomic
// pointer; the VFS embeds it in its inode.
type InfoSlot struct{ p atomic.Pointer[InodeInfo] }

// CryptInfo returns the published fscrypt_inode_info, or nil.
func (s *InfoSlot) CryptInfo() *InodeInfo { return s.p.Load() }

// CasCryptInfo publishes new if the slot still holds old.
func (s *InfoSlot) CasCryptInfo(old, new *InodeInfo) bool { return s.p.CompareAndSwap(old, new) }

// SuperBlock is what fs/crypto needs from struct super_block.
type SuperBlock interface {
	// ID is s_id, used in log messages ("vdb").
	ID() string
	// UUID is s_uuid, hashed into IV_INO_LBLK_* keys.
	UUID() [16]byte
	// Cop is s_cop, the filesystem's fscrypt_operations.
	Cop() Operations
	// MasterKeys is s_master_keys, the filesystem's keyring. The
	// superblock creates it once (NewKeyring) and returns the same one.
	MasterKeys() *Keyring
	// MaxBytes is s_maxbytes, the largest file size; IV_INO_LBLK_*
	// policies need every data unit index of a file to fit in 32 bits.
	MaxBytes() int64
	// Crypto is the machine's Crypto API (algorithm registry).
	Crypto() CryptoAPI
}

// Operations is struct fscrypt_operations (include/linux/fscrypt.h), the
// filesystem's half of the contract.
type Operations interface {
	// GetContext copies the inode's encryption context into buf and
	// returns its length; ENODATA when the inode has none, ERANGE when buf
	// is too small (->get_context).
	GetContext(t *kernel.Task, inode Inode, buf []byte) (int, error)
	// SetContext stores ctx as the inode's context and marks the inode
	// encrypted (->set_context). fsData is the filesystem's transaction
	// handle, passed through from SetContext.
	SetContext(t *kernel.Task, inode Inode, ctx []byte, fsData any) error
	// EmptyDir reports whether a directory has no entries but "." and ".."
	// (->empty_dir).
	EmptyDir(t *kernel.Task, inode Inode) bool
	// HasStableInodes reports whether inode numbers never change
	// (->has_stable_inodes), required by IV_INO_LBLK_* policies.
	HasStableInodes() bool
	// Has32BitInodes is ->has_32bit_inodes: inode numbers fit in 32 bits,
	// required by IV_INO_LBLK_* policies.
	Has32BitInodes() bool
	// SupportsSubblockDataUnits is ->supports_subblock_data_units: whether
	// a v2 policy may set log2_data_unit_size.
	SupportsSubblockDataUnits() bool
	// EvictDecryptedInode models what FS_IOC_REMOVE_ENCRYPTION_KEY does to each
	// inode unlocked by the key (evict_dentries_for_decrypted_inodes):
	// shrink the inode's unused dentries and iput it, so that an inode
	// nothing else holds is evicted (the VFS then calls
	// PutEncryptionInfo). An inode kept busy by an open file stays.
	EvictDecryptedInode(t *kernel.Task, inode Inode)
}

func isReg(i Inode) bool { return i.Mode()&SIFMT == SIFREG }
func isDir(i Inode) bool { return i.Mode()&SIFMT == SIFDIR }
func isLnk(i Inode) bool { return i.Mode()&SIFMT == SIFLNK }

// warn is fscrypt_warn: "fscrypt (sb, inode N): msg".
func warn(t *kernel.Task, inode Inode, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if inode == nil {
		t.Printk("fscrypt: %s", msg)
		return
	}
	t.Printk("fscrypt (%s, inode %d): %s", inode.SuperBlock().ID(), inode.Ino(), msg)
}

// fscryptErr is fscrypt_err (same format, KERN_ERR).
func fscryptErr(t *kernel.Task, inode Inode, format string, args ...any) {
	warn(t, inode, format, args...)
}
