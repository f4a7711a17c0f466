// Package bare hosts fscrypt without a filesystem: a superblock and inodes
// that implement the interfaces package fscrypt needs from the VFS
// (fscrypt.Inode, fscrypt.SuperBlock and fscrypt.Operations) and nothing
// else, kept in memory (a context as an xattr would hold it). `vfslab
// crypt`, the twin of xfstests' fscrypt-crypt-util, and the fname, v1kdf
// and read workloads run the real fs/crypto code paths on it, as do
// fscrypt's own tests.
package bare

import (
	"fmt"
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/kernel"
)

// SB is a superblock. Its exported fields configure it before use.
type SB struct {
	Name          string
	FSUUID        [16]byte
	API           fscrypt.CryptoAPI
	Keys          *fscrypt.Keyring
	MaxBytesLimit int64
	// NoStableInodes, No32BitInodes and NoSubblock turn the corresponding
	// fscrypt_operations capabilities off.
	NoStableInodes bool
	No32BitInodes  bool
	NoSubblock     bool

	mu      sync.Mutex
	nextIno uint64
}

// NewSB returns a superblock named "bare" with a keyring and the Crypto
// API api; s_maxbytes is 2^44 (ext4 with 4 KiB blocks). The patch variants
// its code runs are those of the calling task's kernel.
func NewSB(api fscrypt.CryptoAPI) *SB {
	return &SB{Name: "bare", API: api, Keys: fscrypt.NewKeyring(), MaxBytesLimit: 1 << 44, nextIno: 11}
}

// ID implements fscrypt.SuperBlock.
func (sb *SB) ID() string { return sb.Name }

// UUID implements fscrypt.SuperBlock.
func (sb *SB) UUID() [16]byte { return sb.FSUUID }

// Cop implements fscrypt.SuperBlock.
func (sb *SB) Cop() fscrypt.Operations { return sb }

// MasterKeys implements fscrypt.SuperBlock.
func (sb *SB) MasterKeys() *fscrypt.Keyring { return sb.Keys }

// MaxBytes implements fscrypt.SuperBlock.
func (sb *SB) MaxBytes() int64 { return sb.MaxBytesLimit }

// Crypto implements fscrypt.SuperBlock.
func (sb *SB) Crypto() fscrypt.CryptoAPI { return sb.API }

// GetContext implements fscrypt.Operations.
func (sb *SB) GetContext(t *kernel.Task, inode fscrypt.Inode, buf []byte) (int, error) {
	i := inode.(*Inode)
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.ctx == nil {
		return 0, errno.ENODATA
	}
	if len(buf) < len(i.ctx) {
		return 0, errno.ERANGE
	}
	return copy(buf, i.ctx), nil
}

// SetContext implements fscrypt.Operations: it stores the context and sets
// the encrypted flag.
func (sb *SB) SetContext(t *kernel.Task, inode fscrypt.Inode, ctx []byte, fsData any) error {
	i := inode.(*Inode)
	i.mu.Lock()
	defer i.mu.Unlock()
	i.ctx = append([]byte(nil), ctx...)
	i.encrypted = true
	return nil
}

// EmptyDir implements fscrypt.Operations.
func (sb *SB) EmptyDir(t *kernel.Task, inode fscrypt.Inode) bool { return inode.(*Inode).Entries == 0 }

// HasStableInodes implements fscrypt.Operations.
func (sb *SB) HasStableInodes() bool { return !sb.NoStableInodes }

// Has32BitInodes implements fscrypt.Operations.
func (sb *SB) Has32BitInodes() bool { return !sb.No32BitInodes }

// SupportsSubblockDataUnits implements fscrypt.Operations.
func (sb *SB) SupportsSubblockDataUnits() bool { return !sb.NoSubblock }

// EvictDecryptedInode implements fscrypt.Operations: an inode with no open count is
// evicted (its key freed with fscrypt.PutEncryptionInfo).
func (sb *SB) EvictDecryptedInode(t *kernel.Task, inode fscrypt.Inode) {
	i := inode.(*Inode)
	i.mu.Lock()
	busy := i.Opens > 0
	i.mu.Unlock()
	if !busy {
		i.Evict(t)
	}
}

// NewInode returns an inode of sb with the given number (0: the next free
// one) and mode (S_IFREG, S_IFDIR or S_IFLNK bits), 4 KiB blocks.
func (sb *SB) NewInode(ino uint64, mode uint32) *Inode {
	sb.mu.Lock()
	if ino == 0 {
		ino = sb.nextIno
		sb.nextIno++
	}
	sb.mu.Unlock()
	return &Inode{ino: ino, mode: mode, BlockBits: 12, sb: sb}
}

// Inode is an inode.
type Inode struct {
	fscrypt.InfoSlot
	ino       uint64
	mode      uint32
	BlockBits uint8
	sb        *SB
	// Casefold marks a casefolded directory; Entries is the number of
	// entries besides "." and ".." (for EmptyDir); Opens counts open
	// files (an inode with Opens > 0 is busy); Owner is i_uid.
	Casefold bool
	Entries  int
	Opens    int
	Owner    uint32

	mu        sync.Mutex
	ctx       []byte
	encrypted bool
	Evicted   bool
}

// Ino implements fscrypt.Inode.
func (i *Inode) Ino() uint64 { return i.ino }

// SetIno assigns the inode number (a filesystem may assign it after
// fscrypt_prepare_new_inode).
func (i *Inode) SetIno(ino uint64) { i.ino = ino }

// Mode implements fscrypt.Inode.
func (i *Inode) Mode() uint32 { return i.mode }

// Blkbits implements fscrypt.Inode.
func (i *Inode) Blkbits() uint8 { return i.BlockBits }

// IsEncrypted implements fscrypt.Inode.
func (i *Inode) IsEncrypted() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.encrypted
}

// IsCasefolded implements fscrypt.Inode.
func (i *Inode) IsCasefolded() bool { return i.Casefold }

// SuperBlock implements fscrypt.Inode.
func (i *Inode) SuperBlock() fscrypt.SuperBlock { return i.sb }

// OwnerUID implements fscrypt.Owner.
func (i *Inode) OwnerUID() uint32 { return i.Owner }

// SetRawContext stores b as the inode's context and marks it encrypted
// (nil clears both), as an offline tool editing the xattr would.
func (i *Inode) SetRawContext(b []byte) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.ctx = append([]byte(nil), b...)
	i.encrypted = b != nil
	if b == nil {
		i.ctx = nil
	}
}

// RawContext returns a copy of the stored context.
func (i *Inode) RawContext() []byte {
	i.mu.Lock()
	defer i.mu.Unlock()
	return append([]byte(nil), i.ctx...)
}

// Evict frees the inode's key (the VFS's evict -> fscrypt_put_encryption_info).
func (i *Inode) Evict(t *kernel.Task) {
	fscrypt.PutEncryptionInfo(t, i)
	i.mu.Lock()
	i.Evicted = true
	i.mu.Unlock()
}

// String is a one-line dump.
func (i *Inode) String() string {
	return fmt.Sprintf("ino=%d mode=%o encrypted=%t", i.ino, i.mode, i.IsEncrypted())
}

// AddKey adds key to sb as root (FS_IOC_ADD_ENCRYPTION_KEY), by identifier
// for a v2 key or by its conventional descriptor for v1, and returns both
// names.
func AddKey(t *kernel.Task, sb fscrypt.SuperBlock, version int, key []byte) (id [16]byte, desc [8]byte, err error) {
	arg := &fscrypt.AddKeyArg{RawSize: uint32(len(key)), Raw: key}
	if version == 1 {
		desc = fscrypt.KeyDescriptor(key)
		arg.KeySpec = fscrypt.DescriptorSpec(desc)
	} else {
		arg.KeySpec.Type = fscrypt.KeySpecTypeIdentifier
	}
	if err := fscrypt.IoctlAddKey(t, kernel.RootCred, sb, arg); err != nil {
		return id, desc, err
	}
	copy(id[:], arg.KeySpec.U[:16])
	return id, desc, nil
}

// NewEncryptedInode makes an inode of sb whose stored context is (p, nonce)
// and sets up its key. Errors: key setup's, and ENOKEY when no key was set
// up (the master key is absent).
func (sb *SB) NewEncryptedInode(t *kernel.Task, p fscrypt.Policy, nonce []byte, ino uint64, mode uint32, blockBits uint8) (*Inode, error) {
	i := sb.NewInode(ino, mode)
	i.BlockBits = blockBits
	ctx := fscrypt.Context{Policy: p}
	copy(ctx.Nonce[:], nonce)
	i.SetRawContext(ctx.Marshal())
	if err := fscrypt.GetEncryptionInfo(t, i, false); err != nil {
		return nil, fmt.Errorf("GetEncryptionInfo(%s): %w", p.String(), err)
	}
	if !fscrypt.HasEncryptionKey(i) {
		return nil, errno.ENOKEY
	}
	return i, nil
}
