package shell

import (
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// canMode is gnulib's canonicalize_mode_t: how much of a path
// canonicalize requires to exist.
type canMode int

const (
	// canExisting (readlink -e): every component exists.
	canExisting canMode = iota
	// canAllButLast (readlink -f): every component but the last exists.
	canAllButLast
	// canMissing (readlink -m): none need exist.
	canMissing
)

// maxSymlinks bounds the symlinks canonicalize follows before it gives up
// with ELOOP, as the kernel's MAXSYMLINKS (40) bounds a path walk.
const maxSymlinks = 40

// canonicalize is gnulib's canonicalize_filename_mode, which coreutils'
// readlink -f/-e/-m use: p made absolute, "." and ".." and repeated
// slashes resolved, and every symlink replaced by its target, the names
// kept as they are spelled in p and in the links (on a casefolded
// directory "TARGET" stays "TARGET"). Errors: a component required to
// exist that does not (ENOENT), a non-directory before the last component
// (ENOTDIR), too many symlinks (ELOOP), readlink's and lstat's errors.
func (c *cmd) canonicalize(p string, mode canMode) (string, error) {
	rest := strings.Split(c.abs(p), "/")
	resolved := ""
	links := 0
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if i := strings.LastIndexByte(resolved, '/'); i >= 0 {
				resolved = resolved[:i]
			}
			continue
		}
		last := true
		for _, r := range rest {
			if r != "" {
				last = false
				break
			}
		}
		next := resolved + "/" + comp
		st, err := c.stat(next, false)
		if err != nil {
			if e, ok := errno.Of(err); ok && e == errno.ENOENT && (mode == canMissing || mode == canAllButLast && last) {
				// A component allowed to be missing is kept as it is.
				resolved = next
				continue
			}
			return "", err
		}
		if st.Mode&vfs.S_IFMT == vfs.S_IFLNK {
			if links++; links > maxSymlinks {
				return "", errno.ELOOP
			}
			target, err := c.readlink(next)
			if err != nil {
				return "", err
			}
			if strings.HasPrefix(target, "/") {
				resolved = ""
			}
			rest = append(strings.Split(target, "/"), rest...)
			continue
		}
		if st.Mode&vfs.S_IFMT != vfs.S_IFDIR && !last && mode != canMissing {
			return "", errno.ENOTDIR
		}
		resolved = next
	}
	if resolved == "" {
		return "/", nil
	}
	return resolved, nil
}
