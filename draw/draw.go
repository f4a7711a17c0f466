// Package draw is `vfslab draw`: SVG pictures drawn from the simulator's
// live state, for students and for the patch pages. Each picture is made
// by booting a small machine (package teach) or running the code it
// shows, then reading its state through the packages' exported APIs:
//
//	dentries  the dentry tree (d_parent arrows, d_lockref counts, types)
//	keys      the fscrypt v2 key hierarchy (master key, HKDF contexts,
//	          per-file, per-mode and dirhash keys of the inodes set up)
//	readpath  the read pipeline of each crypto-bio variant (seed 003),
//	          labelled with what a real read through it counted
//	f2fs      an f2fs directory's bucket map and the buckets one name's
//	          lookup visits
//	htree     an ext4 htree outline (root → leaves with hash ranges) with
//	          dx_probe's path for one name; drawn from the names' hashes
//
// The SVG is written by hand (boxes, text, arrows) with encoding/xml's
// escaping of every label.
package draw

import (
	"fmt"

	"github.com/vfslab/vfslab/dcache"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/teach"
	"github.com/vfslab/vfslab/vfs"
)

func dputDentry(m *teach.Machine, d *vfs.Dentry) { dcache.Dput(m.T, d) }

// Dentries boots the trace machine as cfg says, drops caches when cold,
// stats the paths in stat, keeps the files in hold open, and draws the
// dentry tree.
func Dentries(cfg teach.Config, cold bool, stat, hold []string) (string, error) {
	m, err := teach.NewMachine(cfg)
	if err != nil {
		return "", err
	}
	defer m.Close()
	if cold {
		m.DropCaches()
	}
	for _, p := range stat {
		m.P.Stat(m.T, p)
	}
	for _, p := range hold {
		fd, err := m.P.Open(m.T, p, vfs.O_RDONLY, 0)
		if err != nil {
			return "", fmt.Errorf("open %s: %w", p, err)
		}
		defer m.P.Close(m.T, fd)
	}
	root := m.Sys.RootMount().Root
	count := root.Count()
	dcache.Dget(m.T, root)
	tree := snapshotDentry(m.T, root, "/", count)
	dcache.Dput(m.T, root)
	notes := []string{fmt.Sprintf("%s root; cold=%v; key %s; stat: %v; held open: %v", cfg.FS, cold, map[bool]string{false: "present", true: "removed"}[cfg.NoKey], stat, hold)}
	return drawDentryTree(tree, "dentry tree (fs/dcache.c)", notes), nil
}

// Keys boots the trace machine on fs (with a casefolded /secret/cf when
// casefold), drops caches when cold, and draws /secret's key hierarchy.
// Errors: EOPNOTSUPP for a filesystem without fscrypt (memfs, as tmpfs).
func Keys(fs string, cold, casefold bool) (string, error) {
	cfg := teach.Config{FS: fs}
	if casefold {
		cfg.Features = vfs.Features{Casefold: true}
	}
	m, err := teach.NewMachine(cfg)
	if err != nil {
		return "", err
	}
	defer m.Close()
	if !m.HasFscrypt() {
		return "", fmt.Errorf("%s has no fscrypt (no /secret, no keys to draw): %w", fs, errno.EOPNOTSUPP)
	}
	if casefold {
		if err := m.P.Mkdir(m.T, "/secret/cf", 0o755); err != nil {
			return "", err
		}
		fd, err := m.P.Open(m.T, "/secret/cf", vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
		if err != nil {
			return "", err
		}
		fl := uint32(vfs.FS_CASEFOLD_FL)
		_, err = m.P.Ioctl(m.T, fd, uint32(vfs.FS_IOC_SETFLAGS), &fl)
		m.P.Close(m.T, fd)
		if err != nil {
			return "", fmt.Errorf("casefold /secret/cf on %s: %w", fs, err)
		}
		if err := m.WriteFile("/secret/cf/Doc", "x"); err != nil {
			return "", err
		}
	}
	if cold {
		m.DropCaches()
	}
	keys, err := collectKeys(m, "/secret")
	if err != nil {
		return "", err
	}
	notes := []string{fmt.Sprintf("%s; /secret: v2 policy, AES-256-XTS contents, AES-256-CTS filenames, padding 32; cold=%v", fs, cold),
		"fs/crypto/keysetup.c, keyring.c, hkdf.c: the keys of inodes whose fscrypt_inode_info is set up at the time of drawing"}
	return drawKeys(m, keys, "fscrypt key hierarchy (v2 policy)", notes), nil
}

// ReadPaths reads pages through the read path under each variant and
// draws their pipelines.
func ReadPaths(variants []string, pages int) (string, error) {
	var runs []*readPathRun
	for _, v := range variants {
		r, err := runReadPath(v, pages)
		if err != nil {
			return "", err
		}
		runs = append(runs, r)
	}
	notes := []string{fmt.Sprintf("a %d KiB read of an AES-256-XTS file, one bio; counts are the events of the reader, loop0 and fscrypt_read_queue tasks", pages*4),
		"fs/crypto/bio.c fscrypt_decrypt_bio; seed 003 (crypto-bio)"}
	return drawReadPaths(runs, "fscrypt read pipeline per crypto-bio variant", notes), nil
}

// F2fsBuckets draws the bucket map for name.
func F2fsBuckets(name string, depth, dirLevel uint32) string {
	h := f2fs.F2fsDentryHash([]byte(name))
	notes := []string{fmt.Sprintf("not casefolded, not encrypted: TEA hash; current_depth %d, i_dir_level %d; __f2fs_find_entry searches level 0, 1, ... until found", depth, dirLevel),
		"fs/f2fs/dir.c: dir_buckets, bucket_blocks, dir_block_index; highlighted: the bucket of each level the lookup reads"}
	return drawF2fsBuckets(name, h, depth, dirLevel, "f2fs multi-level hash directory", notes)
}

// HtreeSeed is the s_hash_seed of the drawn htree.
var HtreeSeed = func() [16]byte {
	var s [16]byte
	copy(s[:], bare.PlaintextStream("vfslab draw s_hash_seed", 16))
	return s
}()

// Htree draws an htree of name and n other names.
func Htree(name string, n, perLeaf int) (string, error) {
	names := []string{name}
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("file%03d", i))
	}
	leaves, hs, err := buildHtree(names, HtreeSeed, perLeaf)
	if err != nil {
		return "", err
	}
	notes := []string{"DRAWN FROM THE NAMES' HASHES, not read from a live directory: names sorted by half_md4 hash and split into leaves",
		fmt.Sprintf("s_hash_seed %x; %d names, %d per leaf; fs/ext4/namei.c dx_probe", HtreeSeed, len(names), perLeaf)}
	return drawHtree(leaves, name, hs[name], "ext4 htree outline", notes), nil
}
