// Package errno holds the Linux errno values the simulator returns, as
// syscall.Errno, and their symbolic names.
//
// The values are Linux's (include/uapi/asm-generic/errno-base.h and
// errno.h), whatever the host: the simulator models Linux, so a -ENOKEY it
// returns must print and compare as Linux's ENOKEY even when vfslab runs on
// another operating system. On Linux these constants are identical to the
// syscall package's, so errors.Is(err, syscall.ENOENT) works there too.
package errno

import (
	"strconv"
	"syscall"
)

// Linux errno values used by the model. EFSCORRUPTED is the kernel's alias
// for EUCLEAN (fs/ext4/ext4.h, fs/f2fs/f2fs.h).
const (
	EPERM        = syscall.Errno(1)
	ENOENT       = syscall.Errno(2)
	EINTR        = syscall.Errno(4)
	EIO          = syscall.Errno(5)
	ENXIO        = syscall.Errno(6)
	E2BIG        = syscall.Errno(7)
	EBADF        = syscall.Errno(9)
	ECHILD       = syscall.Errno(10)
	EAGAIN       = syscall.Errno(11)
	ENOMEM       = syscall.Errno(12)
	EACCES       = syscall.Errno(13)
	EFAULT       = syscall.Errno(14)
	ENOTBLK      = syscall.Errno(15)
	EBUSY        = syscall.Errno(16)
	EEXIST       = syscall.Errno(17)
	EXDEV        = syscall.Errno(18)
	ENODEV       = syscall.Errno(19)
	ENOTDIR      = syscall.Errno(20)
	EISDIR       = syscall.Errno(21)
	EINVAL       = syscall.Errno(22)
	EMFILE       = syscall.Errno(24)
	ENOTTY       = syscall.Errno(25)
	EFBIG        = syscall.Errno(27)
	ENOSPC       = syscall.Errno(28)
	ESPIPE       = syscall.Errno(29)
	EROFS        = syscall.Errno(30)
	EMLINK       = syscall.Errno(31)
	EPIPE        = syscall.Errno(32)
	ERANGE       = syscall.Errno(34)
	EDEADLK      = syscall.Errno(35)
	ENAMETOOLONG = syscall.Errno(36)
	ENOSYS       = syscall.Errno(38)
	ENOTEMPTY    = syscall.Errno(39)
	ELOOP        = syscall.Errno(40)
	ENODATA      = syscall.Errno(61)
	EBADR        = syscall.Errno(53)
	ENOPKG       = syscall.Errno(65)
	ENOBUFS      = syscall.Errno(105)
	ESHUTDOWN    = syscall.Errno(108)
	EOVERFLOW    = syscall.Errno(75)
	EBADMSG      = syscall.Errno(74)
	EOPNOTSUPP   = syscall.Errno(95)
	ESTALE       = syscall.Errno(116)
	EUCLEAN      = syscall.Errno(117)
	EDQUOT       = syscall.Errno(122)
	ENOKEY       = syscall.Errno(126)
	EKEYEXPIRED  = syscall.Errno(127)
	EKEYREVOKED  = syscall.Errno(128)
	EKEYREJECTED = syscall.Errno(129)

	EFSCORRUPTED = EUCLEAN
	// EINPROGRESS is returned by asynchronous crypto requests that will
	// complete through their callback (include/linux/crypto.h).
	EINPROGRESS = syscall.Errno(115)
	// ENOTSUPP is the kernel-internal 524 (include/linux/errno.h).
	ENOTSUPP = syscall.Errno(524)
)

var names = map[syscall.Errno]string{
	EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", ENXIO: "ENXIO", EPIPE: "EPIPE", EIO: "EIO", E2BIG: "E2BIG", EBADF: "EBADF",
	ECHILD: "ECHILD", ESTALE: "ESTALE", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EFAULT: "EFAULT",
	EBUSY: "EBUSY", EEXIST: "EEXIST", EXDEV: "EXDEV", ENOTDIR: "ENOTDIR", ENOTBLK: "ENOTBLK", ENODEV: "ENODEV",
	EISDIR: "EISDIR", EINVAL: "EINVAL", EMFILE: "EMFILE", ENOTTY: "ENOTTY",
	EFBIG: "EFBIG", ENOSPC: "ENOSPC", ESPIPE: "ESPIPE", EROFS: "EROFS",
	EMLINK: "EMLINK", ERANGE: "ERANGE", ENAMETOOLONG: "ENAMETOOLONG",
	ENOSYS: "ENOSYS", ENOTEMPTY: "ENOTEMPTY", ELOOP: "ELOOP", ENODATA: "ENODATA", EBADR: "EBADR", ENOPKG: "ENOPKG", ENOBUFS: "ENOBUFS", ESHUTDOWN: "ESHUTDOWN",
	EOVERFLOW: "EOVERFLOW", EBADMSG: "EBADMSG", EOPNOTSUPP: "EOPNOTSUPP",
	EUCLEAN: "EUCLEAN", ENOKEY: "ENOKEY", EKEYREVOKED: "EKEYREVOKED",
	EDEADLK: "EDEADLK", EDQUOT: "EDQUOT", EKEYEXPIRED: "EKEYEXPIRED", EKEYREJECTED: "EKEYREJECTED",
	EINPROGRESS: "EINPROGRESS", ENOTSUPP: "ENOTSUPP",
}

// Name returns the symbolic Linux name of e ("ENOENT"), or "E<n>" for a value
// the model never returns.
func Name(e syscall.Errno) string {
	if n, ok := names[e]; ok {
		return n
	}
	return "E" + strconv.FormatUint(uint64(e), 10)
}

// Of returns the errno carried by err (err itself, or one it wraps), and
// whether there was one. Errors that are not errnos report false.
func Of(err error) (syscall.Errno, bool) {
	for err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0, false
		}
		err = u.Unwrap()
	}
	return 0, false
}
