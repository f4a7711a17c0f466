package shell

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// xfsHelp is each xfs_io command's one-line description and the help
// text of its options (help_f: "CMD ARGS -- DESCRIPTION", then the
// command's own help, each option as " -X -- what it does").
var xfsHelp = map[string]struct{ oneline, text string }{
	"add_enckey": {"add an encryption key to the filesystem", `
 add an encryption key to the filesystem

 The raw key is read from standard input unless -k is given.
 -d DESCRIPTOR -- add the key as a v1 key with this master_key_descriptor
 -k KEY_ID -- take the raw key from this fscrypt-provisioning key
`},
	"enckey_status": {"get status of an encryption key", `
 get the status of a filesystem encryption key
`},
	"fiemap": {"print block mapping for a file", `
 prints the block mapping of the open file's data, one line per extent:
     extent: [startoffset..endoffset]: startblock..endblock
 or 'hole' for a range without blocks; offsets and blocks in 512-byte units.
 -a -- the attribute fork (not supported: no filesystem of the machine has one)
 -l -- also print each extent's length in 512-byte blocks
 -n -- query at most n extents
 -v -- verbose: a table with the extents' flags
 offset and len restrict the mapping to a range of the file.
`},
	"fsync":     {"calls fsync(2) to flush all in-core file state to disk", "\n flush the open file's data and metadata to the device\n"},
	"fdatasync": {"calls fdatasync(2) to flush the files in-core data to disk", "\n flush the open file's data to the device\n"},
	"syncfs":    {"calls syncfs(2) to flush all in-core filesystem state to disk", "\n flush the filesystem of the open file to its device\n"},
	"get_encpolicy": {"display the encryption policy of the current file", `
 display the encryption policy of the current file

 -1 -- use only the old (v1) ioctl to get the policy
 -t -- test whether v2 encryption policies are supported: prints
       "supported", "unsupported", or an error
`},
	"set_encpolicy": {"assign an encryption policy to the current file", `
 assign an encryption policy to the open (empty) directory

 -c MODE -- contents encryption mode
 -n MODE -- filenames encryption mode
 -f FLAGS -- policy flags
 -s LOG2_DUSIZE -- log2 of the data unit size
 -v VERSION -- policy version (1 or 2)
 keyspec is a 16-digit v1 key descriptor or a 32-digit v2 key identifier.
`},
	"rm_enckey": {"remove an encryption key from the filesystem", `
 remove a filesystem encryption key

 -a -- remove the key for all users that added it (root only)
`},
	"pread":    {"reads a number of bytes at a specified offset", "\n read a range of the open file\n -v -- dump the data read\n -b bs -- buffer size\n"},
	"pwrite":   {"writes a number of bytes at a specified offset", "\n write a range of the open file\n -S seed -- fill byte\n -b bs -- buffer size\n"},
	"truncate": {"truncates the current file at the given offset", "\n set the open file's size\n"},
	"help":     {"help for one or all commands", "\n print the commands, or the help of one command\n"},
	"quit":     {"exit the program", "\n exit xfs_io\n"},
}

// help is xfs_io's help: every command's line, or one command's help;
// "command NAME not found" (on stdout, status 0) for another.
func (x *xfsIo) help(args []string) {
	c := x.c
	if len(args) == 0 {
		var names []string
		for n := range xfsHelp {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(c.out, "%s %s-- %s\n", n, usagePart(n), xfsHelp[n].oneline)
		}
		fmt.Fprintf(c.out, "\nUse 'help commandname' for extended help.\n")
		return
	}
	h, ok := xfsHelp[args[0]]
	if !ok {
		fmt.Fprintf(c.out, "command %s not found\n", args[0])
		return
	}
	fmt.Fprintf(c.out, "%s %s-- %s\n%s\n", args[0], usagePart(args[0]), h.oneline, h.text)
}

func usagePart(n string) string {
	u := xfsUsage[n]
	if n == "fiemap" {
		u = "[-alv] [-n nx] [offset [len]]"
	}
	if u == "" {
		return ""
	}
	return u + " "
}

// fiemap is xfs_io's fiemap [-alv] [-n nx] [offset [len]]: FS_IOC_FIEMAP
// on the open file, printed as xfs_io prints it (512-byte units; holes
// between and after extents as "hole").
func (x *xfsIo) fiemap(args []string) {
	c := x.c
	verbose, lflag, nx := false, false, 0
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" && i+1 < len(args):
			n, err := strconv.Atoi(args[i+1])
			if err != nil {
				x.usage("fiemap")
				return
			}
			nx = n
			i++
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, ch := range a[1:] {
				switch ch {
				case 'v':
					verbose = true
				case 'l':
					lflag = true
				case 'a':
					fmt.Fprintf(c.errw, "%s: FIEMAP failed: %s\n", x.name, strerror(errno.EBADR))
					x.exitcode = 1
					return
				default:
					x.usage("fiemap")
					return
				}
			}
		default:
			rest = append(rest, a)
		}
	}
	start, length := uint64(0), ^uint64(0)
	if len(rest) > 0 {
		n, ok := cvtnum(rest[0])
		if !ok {
			x.usage("fiemap")
			return
		}
		start = uint64(n)
	}
	if len(rest) > 1 {
		n, ok := cvtnum(rest[1])
		if !ok {
			x.usage("fiemap")
			return
		}
		length = uint64(n)
	}
	fm := &vfs.Fiemap{Start: start, Length: length, Flags: vfs.FIEMAP_FLAG_SYNC, MaxExtents: 1 << 20}
	if nx > 0 {
		fm.MaxExtents = uint32(nx)
	}
	if err := c.ioctl(x.f, "FS_IOC_FIEMAP", vfs.FS_IOC_FIEMAP, fm); err != nil {
		fmt.Fprintf(c.errw, "%s: ioctl(FS_IOC_FIEMAP) [\"%s\"]: %s\n", c.name, x.name, strerror(err))
		x.exitcode = 1
		return
	}
	var size int64
	c.sys(fmt.Sprintf("fstat(%d)", x.f.fd), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		st, err := p.Fstat(t, x.f.fd)
		size = st.Size
		return 0, err
	})
	fmt.Fprintf(c.out, "%s:\n", x.name)
	if verbose {
		fmt.Fprintf(c.out, " EXT: FILE-OFFSET      BLOCK-RANGE          TOTAL FLAGS\n")
	}
	n := 0
	line := func(lo, hi uint64, phys string, total uint64, flags string) {
		if verbose {
			fmt.Fprintf(c.out, "%4d: %-16s %-20s %5d %s\n", n, fmt.Sprintf("[%d..%d]:", lo, hi), phys, total, flags)
		} else if lflag {
			fmt.Fprintf(c.out, "\t%d: [%d..%d]: %s %d blocks\n", n, lo, hi, phys, total)
		} else {
			fmt.Fprintf(c.out, "\t%d: [%d..%d]: %s\n", n, lo, hi, phys)
		}
		n++
	}
	next := start / 512
	for _, e := range fm.Extents {
		lo := e.Logical / 512
		if lo > next {
			line(next, lo-1, "hole", lo-next, "")
		}
		blocks := e.Length / 512
		line(lo, lo+blocks-1, fmt.Sprintf("%d..%d", e.Physical/512, e.Physical/512+blocks-1), blocks, fmt.Sprintf("0x%x", e.Flags))
		next = lo + blocks
	}
	end := uint64(size+511) / 512
	if length != ^uint64(0) {
		end = min(end, (start+length+511)/512)
	}
	if next < end && (nx == 0 || n < nx) {
		line(next, end-1, "hole", end-next, "")
	}
}
