package shell

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/vfs"
)

// cmdTrace is `trace on|off`: while on, every syscall the commands make
// prints its function_graph trace (as vfslab trace prints it, without
// durations: the machine's clock is fixed) and its result on standard
// error.
func cmdTrace(c *cmd) int {
	if c.usageHelp() {
		return 0
	}
	if len(c.args) != 1 || (c.args[0] != "on" && c.args[0] != "off") {
		fmt.Fprintln(c.errw, "Usage: trace on|off")
		return 2
	}
	c.m.mu.Lock()
	c.m.tracing = c.args[0] == "on"
	c.m.mu.Unlock()
	return 0
}

// cmdEvents prints the events the machine counted since boot or the last
// `events reset`, one per line.
func cmdEvents(c *cmd) int {
	if c.usageHelp() {
		return 0
	}
	if len(c.args) > 1 || (len(c.args) == 1 && c.args[0] != "reset") {
		fmt.Fprintln(c.errw, "Usage: events [reset]")
		return 2
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	base := c.m.evSnap.(*events.Counters)
	if len(c.args) == 1 {
		c.m.evSnap = c.m.t.Ev.Clone()
		return 0
	}
	d := c.m.t.Ev.Sub(base).Map()
	names := make([]string, 0, len(d))
	for n, v := range d {
		if v != 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(c.out, "%s %d\n", n, d[n])
	}
	return 0
}

// cmdPatches is `patches [SET]`: with no argument it prints the kernel's
// patch set; with one, it boots a new machine whose kernel runs that set
// (the set is fixed when a kernel is built): everything the script made
// before is gone, and the scratch devices come back unformatted. Run it
// before mkfs and mount.
func cmdPatches(c *cmd) int {
	if c.usageHelp() {
		return 0
	}
	if len(c.args) == 0 {
		c.m.mu.Lock()
		fmt.Fprintln(c.out, c.m.patches.String())
		c.m.mu.Unlock()
		return 0
	}
	if len(c.args) != 1 {
		fmt.Fprintln(c.errw, "Usage: patches [id=variant,...]")
		return 2
	}
	set, err := patch.Parse(c.args[0])
	if err != nil {
		fmt.Fprintln(c.errw, "patches:", err)
		return 2
	}
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for _, p := range c.m.procs {
		p.Exit(c.m.t)
	}
	c.m.patches = set
	if err := c.m.boot(); err != nil {
		fmt.Fprintln(c.errw, "patches:", err)
		return 1
	}
	return 0
}

// cmdDump prints a live ext4 or f2fs directory block by block, as vfslab
// dump prints the directory it builds, with the directory checker's
// verdict.
func cmdDump(c *cmd) int {
	if c.usageHelp() {
		return 0
	}
	if len(c.args) != 1 {
		fmt.Fprintln(c.errw, "Usage: dump DIR")
		return 2
	}
	p := c.abs(c.args[0])
	var out string
	_, err := c.sys("", func(t *kernel.Task, pr *vfs.Proc) (int64, error) {
		d, err := pr.LookupDentry(t, p, true)
		if err != nil {
			return 0, err
		}
		defer dcache.Dput(t, d)
		inode := d.Inode()
		if inode == nil || !inode.IsDir() {
			return 0, vfsErrNotDir
		}
		out, err = DumpDir(t, inode)
		return 0, err
	})
	if err != nil {
		fmt.Fprintf(c.errw, "dump: %s: %s\n", c.args[0], strerror(err))
		return 1
	}
	io.WriteString(c.out, out)
	if strings.Contains(out, "check: FAIL") {
		return 1
	}
	return 0
}

// DumpDir renders a live ext4 or f2fs directory block by block (ext4's
// and f2fs's DumpDir, as vfslab dump prints a directory) and ends with the
// directory checker's verdict ("check: ok" or "check: FAIL: ..."), under
// the directory's i_rwsem. Errors: ENOTDIR-like for an inode that is not
// a directory, and one for a directory of another filesystem.
func DumpDir(t *kernel.Task, inode *vfs.Inode) (string, error) {
	if inode == nil || !inode.IsDir() {
		return "", vfsErrNotDir
	}
	inode.Rwsem.Lock()
	defer inode.Rwsem.Unlock()
	var out string
	var err error
	switch inode.SB().Type {
	case ext4.Type:
		dir := ext4.EXT4_I(inode)
		out, err = withNewline(ext4.DumpDir(t, dir)), ext4.CheckDir(t, dir)
	case f2fs.Type:
		dir := f2fs.F2FS_I(inode)
		out, err = withNewline(f2fs.DumpDir(t, dir)), f2fs.CheckDir(t, dir)
	default:
		return "", errNotDiskDir
	}
	if err != nil {
		return out + fmt.Sprintf("check: FAIL: %v\n", err), nil
	}
	return out + "check: ok\n", nil
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

type simpleErr string

func (e simpleErr) Error() string { return string(e) }

var (
	vfsErrNotDir  = simpleErr("Not a directory")
	errNotDiskDir = simpleErr("not an ext4 or f2fs directory")
)
