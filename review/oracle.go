package review

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/fsunicode"
	"github.com/vfslab/vfslab/internal/nsmodel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/review/fault"
	"github.com/vfslab/vfslab/vfs"
)

// walkDepth bounds the namespace walk (components below /d).
const walkDepth = 5

// oracle checks one machine after every step: the reference model of the
// namespace under /d, and the key's presence (without it an encrypted
// directory's names are no-key names, which the model does not predict).
type oracle struct {
	env   Env
	model *nsmodel.Model
	keyOn bool
	// inodes is the count of live inode objects after the set-up's
	// observe (drop_caches): the steady state every later observe
	// returns to.
	inodes int64
	// failed is set by the first report: the model no longer describes
	// the machine, so later steps are not checked.
	failed bool
}

// casefoldMap is the Unicode 12.1 table mkfs's utf8 encoding selects.
var casefoldMap = func() *fsunicode.Map {
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		panic(err)
	}
	return um
}()

// foldName is a name's key in a casefolded directory (utf8_casefold): its
// NFD casefolded form, or the bytes of a name that does not fold.
func foldName(name string) string {
	buf := make([]byte, 4*len(name)+16)
	n, err := casefoldMap.Casefold(buf, []byte(name))
	if err != nil {
		return "\x00raw:" + name
	}
	return string(buf[:n])
}

func newOracle(env Env) *oracle {
	var fold func(string) string
	if env.Casefold {
		fold = foldName
	}
	return &oracle{env: env, model: nsmodel.New(fold, env.Encrypt), keyOn: true}
}

// fsFunc is the filesystem function a step's namespace change is made in.
func (e Env) fsFunc(op Op) string {
	fn := map[Op]string{OpCreate: "create", OpWrite: "file_write_iter", OpTruncate: "setattr", OpMkdir: "mkdir",
		OpRmdir: "rmdir", OpUnlink: "unlink", OpLink: "link", OpRename: "rename"}[op]
	if fn == "" {
		return ""
	}
	if e.FS == "ext4" && op == OpWrite {
		return "ext4_buffered_write_iter"
	}
	return e.FS + "_" + fn
}

// apply changes the model as step s's result r says it did.
func (o *oracle) apply(s Step, r result) error {
	m := o.model
	switch s.Op {
	case OpAddKey:
		if r.err == nil {
			o.keyOn = true
		}
		return nil
	case OpRemoveKey:
		if r.err == nil {
			o.keyOn = false
		}
		return nil
	case OpWrite:
		// open(O_CREAT) may succeed and pwrite fail.
		if !r.opened {
			return nil
		}
		if err := m.Create(s.A); err != nil {
			return err
		}
		return m.Write(s.A, s.Off, r.wrote)
	}
	if r.err != nil {
		return nil
	}
	switch s.Op {
	case OpCreate:
		return m.Create(s.A)
	case OpTruncate:
		return m.Truncate(s.A, s.Len)
	case OpMkdir:
		return m.Mkdir(s.A)
	case OpRmdir:
		return m.Rmdir(s.A)
	case OpUnlink:
		return m.Unlink(s.A)
	case OpLink:
		return m.Link(s.A, s.B)
	case OpRename:
		return m.Rename(s.A, s.B)
	}
	return nil
}

// check applies step i (s, with result r) to the model and checks the
// machine's state after it: es is the walk of /d (observation), tree the
// dcache's violations, inodes the live inode objects after drop_caches.
// It returns at most one finding, the first violation of the run.
func (o *oracle) check(s Step, i int, r result, es []nsmodel.Entry, tree []string, inodes int64) []Finding {
	if o.failed {
		return nil
	}
	fn := o.env.fsFunc(s.Op)
	if fn == "" {
		fn = s.kernelFunc()
	}
	report := func(fn, what string, diffs []string) []Finding {
		o.failed = true
		if len(diffs) > 3 {
			diffs = append(diffs[:3], fmt.Sprintf("and %d more", len(diffs)-3))
		}
		return []Finding{{Kind: KindInvariant, Function: fn, step: i,
			Detail: fmt.Sprintf("after step %d %s (%s): %s: %s", i+1, s, fault0(r), what, strings.Join(diffs, "; "))}}
	}
	if err := o.apply(s, r); err != nil {
		return report(fn, "the namespace model", []string{err.Error()})
	}
	if len(tree) > 0 {
		return report(s.kernelFunc(), "dcache invariants", tree)
	}
	if o.keyOn || !o.env.Encrypt {
		if d := nsmodel.CheckLinks(es, walkDepth); len(d) > 0 {
			return report(fn, "link counts against the names", d)
		}
		if d := nsmodel.Compare(o.model.Entries(walkDepth), es); len(d) > 0 {
			return report(fn, "the namespace model", d)
		}
	}
	if inodes != o.inodes {
		return report(fn, "inode objects", []string{fmt.Sprintf("%d inode objects live after drop_caches, %d after the set-up", inodes, o.inodes)})
	}
	return nil
}

// fault0 names a result's errno.
func fault0(r result) string {
	if r.err == nil {
		return "ok"
	}
	return fault.ErrName(r.err)
}

// inodeSites are the kmem caches of inode objects.
var inodeSites = []string{"inode_cache", "ext4_inode_cache", "f2fs_inode_cache"}

// liveInodes counts the inode objects the machine's tasks hold.
func (m *machine) liveInodes() int64 {
	st := new(kmem.Stats)
	for _, t := range m.k.CountedTasks() {
		st.Merge(t.Stats)
	}
	var n int64
	for _, site := range kmem.Sites() {
		for _, name := range inodeSites {
			if site.Name() == name {
				n += st.Site(site).Live()
			}
		}
	}
	return n
}

// checkTree runs dcache.CheckTree from the root dentry.
func (m *machine) checkTree() []string {
	d, err := m.p.LookupDentry(m.t, "/", false)
	if err != nil {
		return []string{"the root does not resolve: " + fault.ErrName(err)}
	}
	defer dput(m.t, d)
	return dcache.CheckTree(m.t, d, walkDepth+2)
}

// entry turns a walk's stat into the model's form.
func entry(rel string, st vfs.Stat) nsmodel.Entry {
	return nsmodel.Entry{Path: rel, Ino: st.Ino, Dir: st.Mode&vfs.S_IFMT == vfs.S_IFDIR, Nlink: st.Nlink, Size: st.Size}
}
