package vfs

// Device numbers (include/linux/kdev_t.h): the kernel's dev_t is 12 bits
// of major above 20 bits of minor (MKDEV); userspace's and the disk
// formats' encodings are old_encode_dev's 16 bits (8 and 8, when both
// fit) and new_encode_dev's 32 (the low 8 minor bits, the major, the rest
// of the minor), which stat(2) reports as st_rdev on 64-bit machines and
// glibc's major() and minor() decode.

// MINORBITS is the width of the minor in dev_t.
const MINORBITS = 20

// MKDEV is MKDEV(ma, mi).
func MKDEV(major, minor uint32) uint32 { return major<<MINORBITS | minor&(1<<MINORBITS-1) }

// MAJOR is MAJOR(dev).
func MAJOR(dev uint32) uint32 { return dev >> MINORBITS }

// MINOR is MINOR(dev).
func MINOR(dev uint32) uint32 { return dev & (1<<MINORBITS - 1) }

// OldValidDev is old_valid_dev: major and minor under 256.
func OldValidDev(dev uint32) bool { return MAJOR(dev) < 256 && MINOR(dev) < 256 }

// OldEncodeDev is old_encode_dev.
func OldEncodeDev(dev uint32) uint16 { return uint16(MAJOR(dev)<<8 | MINOR(dev)) }

// OldDecodeDev is old_decode_dev.
func OldDecodeDev(v uint16) uint32 { return MKDEV(uint32(v>>8&255), uint32(v&255)) }

// NewEncodeDev is new_encode_dev.
func NewEncodeDev(dev uint32) uint32 {
	major, minor := MAJOR(dev), MINOR(dev)
	return minor&0xff | major<<8 | (minor&^0xff)<<12
}

// NewDecodeDev is new_decode_dev.
func NewDecodeDev(v uint32) uint32 {
	major := (v & 0xfff00) >> 8
	minor := v&0xff | (v>>12)&0xfff00
	return MKDEV(major, minor)
}
