package shell

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Device-level commands: dd, and the machine's /dev/urandom stream.

// --- dd ---

func cmdDd(c *cmd) int {
	ifile, ofile := "", ""
	bs, ibs, obs := int64(512), int64(0), int64(0)
	count, skip, seek := int64(-1), int64(0), int64(0)
	var conv, oflag []string
	status := ""
	for _, a := range c.args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			c.errf("unrecognized operand '%s'", a)
			fmt.Fprintf(c.errw, "Try 'dd --help' for more information.\n")
			return 1
		}
		num := func() int64 {
			n, ok := parseSize(v)
			if !ok {
				c.errf("invalid number: '%s'", v)
				return -2
			}
			return n
		}
		switch k {
		case "if":
			ifile = v
		case "of":
			ofile = v
		case "bs":
			bs = num()
		case "ibs":
			ibs = num()
		case "obs":
			obs = num()
		case "count":
			count = num()
		case "skip":
			skip = num()
		case "seek":
			seek = num()
		case "conv":
			conv = strings.Split(v, ",")
		case "oflag", "iflag":
			oflag = append(oflag, strings.Split(v, ",")...)
		case "status":
			status = v
		default:
			c.errf("unrecognized operand '%s'", a)
			fmt.Fprintf(c.errw, "Try 'dd --help' for more information.\n")
			return 1
		}
		if bs == -2 || count == -2 || skip == -2 || seek == -2 || ibs == -2 || obs == -2 {
			return 1
		}
	}
	_ = ibs
	_ = obs
	_ = oflag
	has := func(s string) bool {
		for _, x := range conv {
			if x == s {
				return true
			}
		}
		return false
	}
	var in io.Reader = c.in
	var inf *vfsFile
	if ifile != "" {
		switch c.abs(ifile) {
		case "/dev/zero":
			in = zeroFile{}
		case "/dev/urandom", "/dev/random":
			in = c.m.urandom()
		case "/dev/null":
			in = nullFile{}
		default:
			if bdev := c.m.device(c.abs(ifile)); bdev != nil {
				in = io.NewSectionReader(&devFile{bdev: bdev}, skip*bs, 1<<62)
				break
			}
			f, err := c.open(ifile, vfs.O_RDONLY, 0)
			if err != nil {
				c.errf("failed to open '%s': %s", ifile, strerror(err))
				return 1
			}
			defer f.Close()
			in, inf = f, f
		}
	}
	var out io.Writer = c.out
	var outf *vfsFile
	if bdev := c.m.device(c.abs(ofile)); ofile != "" && bdev != nil {
		// A block device: written in place at seek*bs, never truncated.
		out = io.NewOffsetWriter(&devFile{bdev: bdev}, seek*bs)
	} else if ofile != "" && c.abs(ofile) != "/dev/null" {
		flags := vfs.O_WRONLY | vfs.O_CREAT
		if !has("notrunc") && seek == 0 {
			flags |= vfs.O_TRUNC
		}
		f, err := c.open(ofile, flags, 0o644)
		if err != nil {
			c.errf("failed to open '%s': %s", ofile, strerror(err))
			return 1
		}
		defer f.Close()
		out, outf = f, f
	} else if ofile != "" {
		out = io.Discard
	}
	if bs > c.s.memoryLimit()/2 {
		// What malloc of the buffer would fail for (dd.c's alloc_ibuf).
		c.errf("memory exhausted by input buffer of size %d bytes (%s)", bs, humanIEC(bs))
		return 1
	}
	buf := make([]byte, bs)
	var inPos, outPos int64 = skip * bs, seek * bs
	var full, partial, total int64
	for count < 0 || full+partial < count {
		var n int
		var err error
		if inf != nil {
			var n64 int64
			n64, err = c.sys(fmt.Sprintf("pread64(%d, %d, %d)", inf.fd, bs, inPos), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				n, err := inf.p.Pread(t, inf.fd, buf, inPos)
				return int64(n), err
			})
			n = int(n64)
		} else {
			n, err = io.ReadFull(in, buf)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = nil
			}
		}
		if err != nil {
			c.errf("error reading '%s': %s", ifile, strerror(err))
			return 1
		}
		if n == 0 {
			break
		}
		inPos += int64(n)
		if int64(n) == bs {
			full++
		} else {
			partial++
		}
		if outf != nil {
			_, err = c.sys(fmt.Sprintf("pwrite64(%d, %d, %d)", outf.fd, n, outPos), func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
				n, err := outf.p.Pwrite(t, outf.fd, buf[:n], outPos)
				return int64(n), err
			})
		} else {
			_, err = out.Write(buf[:n])
		}
		if err != nil {
			c.errf("error writing '%s': %s", ofile, strerror(err))
			return 1
		}
		outPos += int64(n)
		total += int64(n)
	}
	if status != "none" {
		fmt.Fprintf(c.errw, "%d+%d records in\n%d+%d records out\n", full, partial, full, partial)
		fmt.Fprintf(c.errw, "%d bytes copied, 0 s, 0 B/s\n", total)
	}
	return 0
}

// detRandom is the machine's /dev/urandom: one xorshift stream per
// machine, started from the seed, so that a script's output does not
// change from run to run.
type detRandom struct {
	mu sync.Mutex
	s  uint64
}

// urandom returns the machine's /dev/urandom stream.
func (m *Machine) urandom() *detRandom {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rnd == nil {
		m.rnd = &detRandom{s: m.seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D}
	}
	return m.rnd
}

func (r *detRandom) Read(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s == 0 {
		r.s = 0x9E3779B97F4A7C15
	}
	for i := range b {
		r.s ^= r.s << 13
		r.s ^= r.s >> 7
		r.s ^= r.s << 17
		b[i] = byte(r.s)
	}
	return len(b), nil
}
