package vfs

// File type and permission bits of i_mode (include/uapi/linux/stat.h).
const (
	S_IFMT    = 0o170000
	S_IFSOCK  = 0o140000
	S_IFLNK   = 0o120000
	S_IFREG   = 0o100000
	S_IFBLK   = 0o060000
	S_IFDIR   = 0o040000
	S_IFCHR   = 0o020000
	S_IFIFO   = 0o010000
	S_IALLUGO = 0o7777
)

// Inode flags, i_flags (include/linux/fs.h).
const (
	S_SYNC      = 1 << 0
	S_NOATIME   = 1 << 1
	S_APPEND    = 1 << 2
	S_IMMUTABLE = 1 << 3
	S_DEAD      = 1 << 4 // removed directory; nothing may be created in it
	S_NOQUOTA   = 1 << 5
	S_DIRSYNC   = 1 << 6
	S_ENCRYPTED = 1 << 14 // IS_ENCRYPTED: the inode has an fscrypt context
	S_CASEFOLD  = 1 << 15 // IS_CASEFOLDED: names in the directory are casefolded
	S_VERITY    = 1 << 16
)

// open(2) flags (include/uapi/asm-generic/fcntl.h, x86-64 values).
const (
	O_RDONLY    = 0
	O_WRONLY    = 1
	O_RDWR      = 2
	O_ACCMODE   = 3
	O_CREAT     = 0o100
	O_EXCL      = 0o200
	O_NOCTTY    = 0o400
	O_TRUNC     = 0o1000
	O_APPEND    = 0o2000
	O_NONBLOCK  = 0o4000
	O_DSYNC     = 0o10000
	O_DIRECT    = 0o40000
	O_LARGEFILE = 0o100000
	O_DIRECTORY = 0o200000
	O_NOFOLLOW  = 0o400000
	O_NOATIME   = 0o1000000
	O_CLOEXEC   = 0o2000000
	O_PATH      = 0o10000000
	O_TMPFILE   = 0o20000000 | O_DIRECTORY
)

// renameat2(2) flags (include/uapi/linux/fs.h).
const (
	RENAME_NOREPLACE = 1 << 0
	RENAME_EXCHANGE  = 1 << 1
	RENAME_WHITEOUT  = 1 << 2
)

// lseek(2) whence values.
const (
	SEEK_SET  = 0
	SEEK_CUR  = 1
	SEEK_END  = 2
	SEEK_DATA = 3
	SEEK_HOLE = 4
)

// Limits (include/uapi/linux/limits.h, include/linux/namei.h).
const (
	// PATH_MAX counts the terminating NUL: a path of PATH_MAX bytes or more
	// is ENAMETOOLONG.
	PATH_MAX = 4096
	// NAME_MAX is the longest component a filesystem accepts.
	NAME_MAX = 255
	// MAXSYMLINKS bounds the symlinks one path walk follows.
	MAXSYMLINKS = 40
)

// Path walk flags, nd->flags (include/linux/namei.h).
const (
	LOOKUP_FOLLOW        = 0x0001
	LOOKUP_DIRECTORY     = 0x0002
	LOOKUP_AUTOMOUNT     = 0x0004
	LOOKUP_EMPTY         = 0x4000
	LOOKUP_DOWN          = 0x8000
	LOOKUP_MOUNTPOINT    = 0x0080
	LOOKUP_REVAL         = 0x0020
	LOOKUP_RCU           = 0x0040
	LOOKUP_OPEN          = 0x0100
	LOOKUP_CREATE        = 0x0200
	LOOKUP_EXCL          = 0x0400
	LOOKUP_RENAME_TARGET = 0x0800
	LOOKUP_PARENT        = 0x0010
)

// Last component types, nd->last_type (fs/namei.c).
const (
	LAST_NORM = iota
	LAST_ROOT
	LAST_DOT
	LAST_DOTDOT
)

// Directory entry types, d_type of linux_dirent64 (include/linux/fs_types.h).
const (
	DT_UNKNOWN = 0
	DT_FIFO    = 1
	DT_CHR     = 2
	DT_DIR     = 4
	DT_BLK     = 6
	DT_REG     = 8
	DT_LNK     = 10
	DT_SOCK    = 12
	DT_WHT     = 14
)

// File mode bits, f_mode (include/linux/fs.h).
const (
	FMODE_READ      = 1 << 0
	FMODE_WRITE     = 1 << 1
	FMODE_LSEEK     = 1 << 2
	FMODE_PREAD     = 1 << 3
	FMODE_PWRITE    = 1 << 4
	FMODE_CREATED   = 1 << 20
	FMODE_OPENED    = 1 << 19
	FMODE_WRITER    = 1 << 16
	FMODE_CAN_READ  = 1 << 17
	FMODE_CAN_WRITE = 1 << 18
	FMODE_STREAM    = 1 << 21
)

// Access modes for may_open (MAY_* of include/linux/fs.h).
const (
	MAY_EXEC   = 0x1
	MAY_WRITE  = 0x2
	MAY_READ   = 0x4
	MAY_APPEND = 0x8
	MAY_OPEN   = 0x20
)

// AT_FDCWD is the dirfd meaning "the current directory".
const AT_FDCWD = -100

// Attribute bits of Iattr.Valid (ATTR_* of include/linux/fs.h).
const (
	ATTR_MODE = 1 << 0
	ATTR_UID  = 1 << 1
	ATTR_GID  = 1 << 2
	ATTR_SIZE = 1 << 3
)

// DtType returns the d_type of an inode mode (fs_umode_to_dtype).
func DtType(mode uint32) uint8 { return uint8(mode & S_IFMT >> 12) }
