package fscrypt

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/errno"
)

// Policy versions, context versions and flags (include/uapi/linux/fscrypt.h,
// fs/crypto/fscrypt_private.h).
const (
	// PolicyV1 is FSCRYPT_POLICY_V1 (the version byte of a v1 policy is 0).
	PolicyV1 = 0
	// PolicyV2 is FSCRYPT_POLICY_V2.
	PolicyV2 = 2
	// ContextV1 and ContextV2 are the version bytes of the on-inode
	// contexts (FSCRYPT_CONTEXT_V1, FSCRYPT_CONTEXT_V2).
	ContextV1 = 1
	ContextV2 = 2

	// PolicyFlagsPadMask selects the filename padding: 4 << (flags & 3).
	PolicyFlagsPadMask = 0x03
	// PolicyFlagsPad4 .. PolicyFlagsPad32 are the padding values.
	PolicyFlagsPad4  = 0x00
	PolicyFlagsPad8  = 0x01
	PolicyFlagsPad16 = 0x02
	PolicyFlagsPad32 = 0x03
	// PolicyFlagDirectKey is FSCRYPT_POLICY_FLAG_DIRECT_KEY.
	PolicyFlagDirectKey = 0x04
	// PolicyFlagIVInoLblk64 is FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64.
	PolicyFlagIVInoLblk64 = 0x08
	// PolicyFlagIVInoLblk32 is FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32.
	PolicyFlagIVInoLblk32 = 0x10

	// PolicyV1Size .. ContextV2Size are the byte sizes of the uapi and
	// on-disk structures.
	PolicyV1Size  = 12
	PolicyV2Size  = 24
	ContextV1Size = 28
	ContextV2Size = 40
	// MaxContextSize is FSCRYPT_SET_CONTEXT_MAX_SIZE.
	MaxContextSize = ContextV2Size
)

// Policy is union fscrypt_policy: a v1 (struct fscrypt_policy_v1) or v2
// (struct fscrypt_policy_v2) encryption policy. Version selects which fields
// are meaningful: v1 uses Descriptor, v2 uses Log2DataUnitSize, Reserved and
// Identifier.
type Policy struct {
	Version          uint8
	ContentsMode     uint8
	FilenamesMode    uint8
	Flags            uint8
	Log2DataUnitSize uint8
	Reserved         [3]byte
	Descriptor       [KeyDescriptorSize]byte
	Identifier       [KeyIdentifierSize]byte
}

// Size returns fscrypt_policy_size: 12 for v1, 24 for v2, 0 for an unknown
// version.
func (p *Policy) Size() int {
	switch p.Version {
	case PolicyV1:
		return PolicyV1Size
	case PolicyV2:
		return PolicyV2Size
	}
	return 0
}

// Marshal returns the policy in its uapi byte layout.
func (p *Policy) Marshal() []byte {
	switch p.Version {
	case PolicyV1:
		b := make([]byte, PolicyV1Size)
		b[0], b[1], b[2], b[3] = p.Version, p.ContentsMode, p.FilenamesMode, p.Flags
		copy(b[4:], p.Descriptor[:])
		return b
	case PolicyV2:
		b := make([]byte, PolicyV2Size)
		b[0], b[1], b[2], b[3], b[4] = p.Version, p.ContentsMode, p.FilenamesMode, p.Flags, p.Log2DataUnitSize
		copy(b[5:8], p.Reserved[:])
		copy(b[8:], p.Identifier[:])
		return b
	}
	return []byte{p.Version}
}

// ParsePolicy reads a policy from its uapi layout; the version byte decides
// the size. Errors: EINVAL for an unknown version or a wrong size.
func ParsePolicy(b []byte) (Policy, error) {
	var p Policy
	if len(b) == 0 {
		return p, errno.EINVAL
	}
	p.Version = b[0]
	if p.Size() == 0 || len(b) != p.Size() {
		return p, errno.EINVAL
	}
	p.ContentsMode, p.FilenamesMode, p.Flags = b[1], b[2], b[3]
	if p.Version == PolicyV1 {
		copy(p.Descriptor[:], b[4:12])
	} else {
		p.Log2DataUnitSize = b[4]
		copy(p.Reserved[:], b[5:8])
		copy(p.Identifier[:], b[8:24])
	}
	return p, nil
}

// Equal is fscrypt_policies_equal: same version and identical bytes.
func (p *Policy) Equal(q *Policy) bool {
	if p.Version != q.Version || p.ContentsMode != q.ContentsMode ||
		p.FilenamesMode != q.FilenamesMode || p.Flags != q.Flags {
		return false
	}
	switch p.Version {
	case PolicyV1:
		return p.Descriptor == q.Descriptor
	case PolicyV2:
		return p.Log2DataUnitSize == q.Log2DataUnitSize && p.Reserved == q.Reserved &&
			p.Identifier == q.Identifier
	}
	return false
}

// PaddingBytes returns the filename padding the policy selects (4..32).
func (p *Policy) PaddingBytes() int { return 4 << (p.Flags & PolicyFlagsPadMask) }

// KeySpec returns the master key specifier the policy names
// (fscrypt_policy_to_key_spec).
func (p *Policy) KeySpec() KeySpecifier {
	var s KeySpecifier
	switch p.Version {
	case PolicyV1:
		s.Type = KeySpecTypeDescriptor
		copy(s.U[:], p.Descriptor[:])
	case PolicyV2:
		s.Type = KeySpecTypeIdentifier
		copy(s.U[:], p.Identifier[:])
	}
	return s
}

// String is the canonical one-line dump, e.g.
// "v2 AES-256-XTS/AES-256-CTS-CBC flags=0x02(pad16) du=0 key=69b2f6ed...".
func (p *Policy) String() string {
	var b strings.Builder
	switch p.Version {
	case PolicyV1:
		b.WriteString("v1")
	case PolicyV2:
		b.WriteString("v2")
	default:
		fmt.Fprintf(&b, "v?%d", p.Version)
	}
	fmt.Fprintf(&b, " %s/%s flags=0x%02x(%s)", modeName(p.ContentsMode), modeName(p.FilenamesMode), p.Flags, flagNames(p.Flags))
	if p.Version == PolicyV1 {
		fmt.Fprintf(&b, " key=%s", hex.EncodeToString(p.Descriptor[:]))
	} else {
		fmt.Fprintf(&b, " du=%d key=%s", p.Log2DataUnitSize, hex.EncodeToString(p.Identifier[:]))
	}
	return b.String()
}

func modeName(n uint8) string {
	if m := ModeByNum(int(n)); m != nil {
		return m.FriendlyName
	}
	return fmt.Sprintf("mode%d", n)
}

func flagNames(f uint8) string {
	parts := []string{fmt.Sprintf("pad%d", 4<<(f&PolicyFlagsPadMask))}
	if f&PolicyFlagDirectKey != 0 {
		parts = append(parts, "DIRECT_KEY")
	}
	if f&PolicyFlagIVInoLblk64 != 0 {
		parts = append(parts, "IV_INO_LBLK_64")
	}
	if f&PolicyFlagIVInoLblk32 != 0 {
		parts = append(parts, "IV_INO_LBLK_32")
	}
	if r := f &^ (PolicyFlagsPadMask | PolicyFlagDirectKey | PolicyFlagIVInoLblk64 | PolicyFlagIVInoLblk32); r != 0 {
		parts = append(parts, fmt.Sprintf("unknown:0x%02x", r))
	}
	return strings.Join(parts, "|")
}

// Context is union fscrypt_context: the policy plus the file's nonce, as
// stored with each encrypted inode (an xattr on ext4 and f2fs).
type Context struct {
	Policy
	Nonce [FileNonceSize]byte
}

// Marshal returns the context in its on-disk layout: 28 bytes for v1
// (version 1), 40 for v2 (fscrypt_new_context).
func (c *Context) Marshal() []byte {
	switch c.Version {
	case PolicyV1:
		b := make([]byte, ContextV1Size)
		b[0], b[1], b[2], b[3] = ContextV1, c.ContentsMode, c.FilenamesMode, c.Flags
		copy(b[4:12], c.Descriptor[:])
		copy(b[12:], c.Nonce[:])
		return b
	case PolicyV2:
		b := make([]byte, ContextV2Size)
		b[0], b[1], b[2], b[3], b[4] = ContextV2, c.ContentsMode, c.FilenamesMode, c.Flags, c.Log2DataUnitSize
		copy(b[5:8], c.Reserved[:])
		copy(b[8:24], c.Identifier[:])
		copy(b[24:], c.Nonce[:])
		return b
	}
	return nil
}

// ParseContext is fscrypt_policy_from_context plus the nonce: it accepts
// exactly a 28-byte v1 or 40-byte v2 context and does not judge the modes or
// flags (fscrypt_supported_policy does). Errors: EINVAL.
func ParseContext(b []byte) (Context, error) {
	var c Context
	if len(b) == 0 {
		return c, errno.EINVAL
	}
	switch b[0] {
	case ContextV1:
		if len(b) != ContextV1Size {
			return c, errno.EINVAL
		}
		c.Version = PolicyV1
		c.ContentsMode, c.FilenamesMode, c.Flags = b[1], b[2], b[3]
		copy(c.Descriptor[:], b[4:12])
		copy(c.Nonce[:], b[12:28])
	case ContextV2:
		if len(b) != ContextV2Size {
			return c, errno.EINVAL
		}
		c.Version = PolicyV2
		c.ContentsMode, c.FilenamesMode, c.Flags, c.Log2DataUnitSize = b[1], b[2], b[3], b[4]
		copy(c.Reserved[:], b[5:8])
		copy(c.Identifier[:], b[8:24])
		copy(c.Nonce[:], b[24:40])
	default:
		return c, errno.EINVAL
	}
	return c, nil
}

// String is the policy's one-line dump followed by the nonce.
func (c *Context) String() string {
	return c.Policy.String() + " nonce=" + hex.EncodeToString(c.Nonce[:])
}
