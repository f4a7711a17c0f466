package shell

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// mount --bind and mount -o remount,bind: mount(8)'s MS_BIND (a second
// mount of what is mounted at the source, vfs.System.BindMount) and its
// remount of a mount's own flags (vfs.System.ReconfigureMount), as
// util-linux does them: `mount --bind -o ro` binds, then remounts the new
// mount read-only.

// optsNow is the record's options as /proc/mounts shows them now: ro when
// the mount or its superblock is read-only (show_vfsmnt's
// mnt_is_readonly), the rest as mounted.
func (r *mountRec) optsNow() string {
	if r.m == nil {
		return r.opts
	}
	state := "rw"
	if r.m.MntIsReadonly() {
		state = "ro"
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(r.opts, "rw"), "ro")
	return state + rest
}

// recordOf is the mount record of the vfs mount m (the root's when m is
// the namespace's root).
func (m *Machine) recordOf(mnt *vfs.Mount) *mountRec {
	for i := len(m.mounts) - 1; i >= 0; i-- {
		if r := m.mounts[i]; r.m == mnt {
			return r
		}
	}
	if mnt == m.sys.RootMount() {
		return m.mounts[0]
	}
	return nil
}

// mountBind is `mount --bind SOURCE TARGET` and `mount -o
// remount,bind[,ro|rw] TARGET`.
func (c *cmd) mountBind(rest []string, remount bool, generic []string) int {
	ro := lastOf(generic, "ro", "rw")
	if remount {
		if len(rest) == 0 {
			fmt.Fprintln(c.errw, "mount: no mount point specified.")
			return 1
		}
		dir := c.abs(rest[len(rest)-1])
		return c.reconfigureBind(dir, rest[len(rest)-1], ro == "ro")
	}
	if len(rest) != 2 {
		fmt.Fprintf(c.errw, "mount: bad usage\nTry 'mount --help' for more information.\n")
		return 1
	}
	src, dir := c.abs(rest[0]), c.abs(rest[1])
	var m *vfs.Mount
	_, err := c.sys(fmt.Sprintf("mount(%q, %q, NULL, MS_BIND, NULL)", src, dir), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		var err error
		m, err = c.m.sys.BindMount(t, p, src, dir)
		return 0, err
	})
	if err != nil {
		if e, ok := errno.Of(err); ok {
			switch e {
			case errno.ENOENT:
				if _, serr := c.stat(src, true); serr != nil {
					fmt.Fprintf(c.errw, "mount: %s: special device %s does not exist.\n", rest[1], rest[0])
				} else {
					fmt.Fprintf(c.errw, "mount: %s: mount point does not exist.\n", rest[1])
				}
				return 32
			case errno.ENOTDIR:
				fmt.Fprintf(c.errw, "mount: %s: mount point is not a directory.\n", rest[1])
				return 32
			}
		}
		fmt.Fprintf(c.errw, "mount: %s: %s.\n", rest[1], strings.ToLower(strerror(err)[:1])+strerror(err)[1:])
		return 32
	}
	c.m.mu.Lock()
	orig := c.m.recordOf(m.SourceMount())
	rec := &mountRec{dir: dir, m: m, bind: true, source: "none", fstype: m.SB.Type.Name, opts: "rw,relatime"}
	if orig != nil {
		rec.source, rec.fstype, rec.opts, rec.dev = orig.source, orig.fstype, orig.opts, orig.dev
	}
	c.m.mounts = append(c.m.mounts, rec)
	c.m.used = true
	c.m.mu.Unlock()
	if ro == "ro" {
		// util-linux's bind-remount for the flags MS_BIND ignores.
		return c.reconfigureBind(dir, rest[1], true)
	}
	return 0
}

// reconfigureBind is MS_REMOUNT|MS_BIND with MS_RDONLY or without.
func (c *cmd) reconfigureBind(dir, arg string, ro bool) int {
	flag := "0"
	if ro {
		flag = "MS_RDONLY"
	}
	_, err := c.sys(fmt.Sprintf("mount(NULL, %q, NULL, MS_REMOUNT|MS_BIND|%s, NULL)", dir, flag), func(t *kernel.Task, p *vfs.Proc) (int64, error) {
		return 0, c.m.sys.ReconfigureMount(t, p, dir, ro)
	})
	if err != nil {
		if e, ok := errno.Of(err); ok && e == errno.EBUSY {
			fmt.Fprintf(c.errw, "mount: %s: mount point is busy.\n", arg)
			return 32
		}
		fmt.Fprintf(c.errw, "mount: %s: mount point not mounted or bad option.\n", arg)
		return 32
	}
	return 0
}
