package memfs_test

import (
	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

func vfsDput(t *kernel.Task, d *vfs.Dentry) { dcache.Dput(t, d) }
