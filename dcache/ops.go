package dcache

import "github.com/vfslab/vfslab/kernel"

// Operations is struct dentry_operations: the hooks a filesystem gives its
// dentries. A nil field is an absent operation; DSetDOp turns the present
// ones into the DCACHE_OP_* flags that the fast paths test instead of
// following d_op.
type Operations[I any] struct {
	// Revalidate is d_revalidate: called by the path walk on a cached
	// dentry, with the directory's inode and the name the walk looked up
	// (the Linux 6.14 signature). It returns valid=false to make the walk
	// drop the dentry and look the name up again, or an error, such as
	// ECHILD when flags has the walk's LOOKUP_RCU bit and the check needs
	// to block.
	Revalidate func(t *kernel.Task, dir *I, name *Qstr, d *Dentry[I], flags uint32) (valid bool, err error)
	// Hash is d_hash, called on the directory dentry d to rehash a name
	// about to be looked up in it (it may replace name.Hash). An error
	// (EINVAL for an invalid name in strict mode) fails the lookup.
	Hash func(t *kernel.Task, d *Dentry[I], name *Qstr) error
	// Compare is d_compare, the directory's operation, called on a child d
	// whose name (str, a snapshot that may be stale under RCU) has the
	// hash of name: 0 when they match, non-zero otherwise.
	Compare func(t *kernel.Task, d *Dentry[I], str string, name *Qstr) int
	// Delete is d_delete, called under d_lock on the final dput: true
	// means kill the dentry instead of keeping it cached.
	Delete func(d *Dentry[I]) bool
	// Release is d_release, called when the dentry is killed.
	Release func(d *Dentry[I])
}

// DSetDOp sets d's operations (d_set_d_op) and the DCACHE_OP_* flags that
// go with them. Call it on a dentry no other task can see yet; DAlloc
// gives every new dentry its parent's operations, so a filesystem sets its
// operations on the root (DMakeRoot) as the kernel sets sb->s_d_op.
func DSetDOp[I any](t *kernel.Task, d *Dentry[I], op *Operations[I]) {
	d.Lock(t)
	d.op = op
	f := Flags(d.flags.Load()) &^ (OpHash | OpCompare | OpRevalidate | OpDelete)
	d.flags.Store(uint32(f | dOpFlags(op)))
	d.Unlock()
}

// dOpFlags returns the DCACHE_OP_* flags that d_set_d_op derives from op.
func dOpFlags[I any](op *Operations[I]) Flags {
	var f Flags
	if op == nil {
		return f
	}
	if op.Hash != nil {
		f |= OpHash
	}
	if op.Compare != nil {
		f |= OpCompare
	}
	if op.Revalidate != nil {
		f |= OpRevalidate
	}
	if op.Delete != nil {
		f |= OpDelete
	}
	return f
}

// DRevalidate calls d's d_revalidate if it has one (the d_revalidate
// helper of fs/namei.c); without one a dentry is valid.
func DRevalidate[I any](t *kernel.Task, dir *I, name *Qstr, d *Dentry[I], flags uint32) (bool, error) {
	if d.Flags()&OpRevalidate == 0 {
		return true, nil
	}
	return d.op.Revalidate(t, dir, name, d, flags)
}

// DHash applies the directory's d_hash to name if it has one, after
// setting name.Hash to the plain full_name_hash salted with dir: what the
// path walk and d_hash_and_lookup do before a lookup.
func DHash[I any](t *kernel.Task, dir *Dentry[I], name *Qstr) error {
	name.Hash = FullNameHash(dir.Salt(), name.Name)
	if dir.Flags()&OpHash != 0 {
		return dir.op.Hash(t, dir, name)
	}
	return nil
}

// MakeQstr returns name with its plain dcache hash in dir (full_name_hash
// salted with dir), without the directory's d_hash.
func MakeQstr[I any](dir *Dentry[I], name string) Qstr {
	return Qstr{Hash: FullNameHash(dir.Salt(), name), Name: name}
}
