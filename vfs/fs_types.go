package vfs

// File types stored in directory entries (FT_* of include/linux/fs_types.h;
// ext4's EXT4_FT_* and f2fs's enum FILE_TYPE have the same values).
const (
	FT_UNKNOWN uint8 = iota
	FT_REG_FILE
	FT_DIR
	FT_CHRDEV
	FT_BLKDEV
	FT_FIFO
	FT_SOCK
	FT_SYMLINK
	FT_MAX
)

// FsUmodeToFtype is fs_umode_to_ftype (fs/fs_types.c): the file type a
// directory entry stores for an inode of the given mode.
func FsUmodeToFtype(mode uint32) uint8 {
	switch mode & S_IFMT {
	case S_IFREG:
		return FT_REG_FILE
	case S_IFDIR:
		return FT_DIR
	case S_IFCHR:
		return FT_CHRDEV
	case S_IFBLK:
		return FT_BLKDEV
	case S_IFIFO:
		return FT_FIFO
	case S_IFSOCK:
		return FT_SOCK
	case S_IFLNK:
		return FT_SYMLINK
	}
	return FT_UNKNOWN
}

// FsFtypeToDtype is fs_ftype_to_dtype (fs/fs_types.c): the d_type readdir
// reports for a stored file type; DT_UNKNOWN for values past FT_MAX.
func FsFtypeToDtype(ft uint8) uint8 {
	switch ft {
	case FT_REG_FILE:
		return DT_REG
	case FT_DIR:
		return DT_DIR
	case FT_CHRDEV:
		return DT_CHR
	case FT_BLKDEV:
		return DT_BLK
	case FT_FIFO:
		return DT_FIFO
	case FT_SOCK:
		return DT_SOCK
	case FT_SYMLINK:
		return DT_LNK
	}
	return DT_UNKNOWN
}
