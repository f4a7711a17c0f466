package sim

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/vfs"

	// The filesystems register themselves with the VFS (as built-in
	// filesystems call register_filesystem at boot); workloads look them
	// up by the name the user gives.
	_ "github.com/vfslab/vfslab/ext4"
	_ "github.com/vfslab/vfslab/f2fs"
	_ "github.com/vfslab/vfslab/memfs"
)

// fsType looks up the registered filesystem a workload's fs parameter
// names; devOnly refuses the types without a block device.
func fsType(name string, devOnly bool) (*vfs.FileSystemType, error) {
	fst, err := vfs.GetFsType(name)
	if err == nil && (fst.RequiresDev || !devOnly) {
		return fst, nil
	}
	var names []string
	for _, f := range vfs.Filesystems() {
		if f.RequiresDev || !devOnly {
			names = append(names, f.Name)
		}
	}
	return nil, fmt.Errorf("bad fs %q: want %s", name, strings.Join(names, ", "))
}
