package tests

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
	"github.com/vfslab/vfslab/ext4"
	"github.com/vfslab/vfslab/f2fs"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/vfs"
)

// corruptTrials is the number of corruptions per configuration of
// TestCorruptionCampaign.
var corruptTrials = flag.Int("corrupt.trials", 25, "corruption campaign: corruptions per configuration")

// corruptAllowed are the errnos a syscall may return on a corrupted
// directory: EUCLEAN (EFSCORRUPTED: ext4_check_dir_entry / __ext4_error,
// f2fs's "corrupted namelen", dx_probe), EBADMSG (EFSBADCRC: metadata_csum
// mismatches), EIO (a block that cannot be read, ext4_read_dirblock's
// "Directory hole found"), ENOENT (a name the corruption hid), EEXIST (a
// name the corruption made visible), ENOSPC (a corrupted bitmap or
// rec_len leaves no room), ENOTEMPTY and ENOTDIR (a corrupted file type),
// EPERM (a corrupted inode number leads an encrypted directory's lookup
// to a directory or symlink of another policy: "Inconsistent encryption
// contexts", fscrypt_has_permitted_context) and ELOOP (it leads to a
// directory that is already an ancestor: d_splice_alias's __d_unalias).
var corruptAllowed = map[error]bool{
	nil: true, errno.EUCLEAN: true, errno.EBADMSG: true, errno.EIO: true, errno.ENOENT: true,
	errno.EEXIST: true, errno.ENOSPC: true, errno.ENOTEMPTY: true, errno.ENOTDIR: true,
	errno.EPERM: true, errno.ELOOP: true,
}

// corruptConfig is a directory layout of the corruption campaign.
type corruptConfig struct {
	name string
	cfg  config
	n    int // entries
}

// corruptConfigs are the layouts: f2fs inline areas and dentry blocks of
// several hash levels, plain and casefolded+encrypted; ext4 linear
// directories, htrees (dx root and leaves) with and without
// metadata_csum, and casefolded+encrypted htrees.
func corruptConfigs() []corruptConfig {
	return []corruptConfig{
		{"f2fs inline", config{fs: kF2fs}, 4},
		{"f2fs inline casefold+encrypt", config{fs: kF2fs, casefold: true, encrypt: true}, 4},
		{"f2fs multi-level blocks", config{fs: kF2fs, f2fs: &f2fs.Options{NoInlineDentry: true}}, 300},
		{"f2fs blocks casefold+encrypt", config{fs: kF2fs, casefold: true, encrypt: true, f2fs: &f2fs.Options{NoInlineDentry: true}}, 120},
		{"ext4 linear", config{fs: kExt4, ext4: &ext4.Options{NoMetadataCsum: true, NoDirIndex: true}}, 40},
		{"ext4 dx", config{fs: kExt4, ext4: &ext4.Options{NoMetadataCsum: true}}, 200},
		{"ext4 dx metadata_csum", config{fs: kExt4}, 200},
		{"ext4 dx casefold+encrypt", config{fs: kExt4, casefold: true, encrypt: true, ext4: &ext4.Options{NoMetadataCsum: true}}, 120},
	}
}

// TestCorruptionCampaign flips random bits or writes random bytes into
// the on-disk directory areas (f2fs inline areas and dentry blocks, ext4
// leaf blocks and dx nodes, found through F2FS_I/EXT4_I), then runs
// lookups, getdents, creat, unlink and mkdir on the directory: every
// answer is one of corruptAllowed, never a Go panic, a BUG or KASAN
// report; and every EUCLEAN comes with a kernel log line (the kernel's
// ext4_error / f2fs_err / EXT4_ERROR_INODE before returning
// -EFSCORRUPTED). It prints the outcome table per configuration and
// syscall.
func TestCorruptionCampaign(t *testing.T) {
	trials := *corruptTrials
	if testing.Short() {
		trials = 5
	}
	r := rand.New(rand.NewPCG(13, 0xc0))
	type key struct{ cfg, op string }
	table := map[key]map[string]int{}
	var errCols []string
	seenCol := map[string]bool{}
	var violations, silent, shortNames, noEndKernel int
	record := func(cfg, op string, err error) {
		k := key{cfg, op}
		if table[k] == nil {
			table[k] = map[string]int{}
		}
		e := errName(err)
		table[k][e]++
		if !seenCol[e] {
			seenCol[e] = true
			errCols = append(errCols, e)
		}
	}
	for _, cc := range corruptConfigs() {
		for trial := 0; trial < trials; trial++ {
			s, err := boot(cc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for i := 0; i < cc.n; i++ {
				name := fmt.Sprintf("entry-%04d", i)
				names = append(names, name)
				if err := s.creat(testDir+"/"+name, nil); err != nil {
					t.Fatalf("%s: %v", cc.name, err)
				}
			}
			if err := s.p.Mkdir(s.t, testDir+"/subdir", 0o755); err != nil {
				t.Fatal(err)
			}
			areas, pblks := s.dirAreas(t, testDir)
			a := areas[r.IntN(len(areas))]
			var what []string
			for range 1 + r.IntN(3) {
				// Half the flips land in the first 512 bytes, where the
				// headers, bitmaps, dx entries and first dirents are.
				i := r.IntN(len(a))
				if r.IntN(2) == 0 {
					i = r.IntN(min(len(a), 512))
				}
				if r.IntN(2) == 0 {
					bit := byte(1) << r.IntN(8)
					a[i] ^= bit
					what = append(what, fmt.Sprintf("byte %d ^= %#x", i, bit))
				} else {
					v := byte(r.Uint32())
					a[i] = v
					what = append(what, fmt.Sprintf("byte %d = %#x", i, v))
				}
			}
			s.unverify(pblks)
			if err := s.dropCaches(testDir); err != nil {
				t.Fatal(err)
			}
			// fscrypt_fname_disk_to_usr refuses a name shorter than 16
			// bytes with EUCLEAN and no log line, in the kernel too: such
			// an EUCLEAN is counted, not a violation.
			s.t.Ev = events.New()
			do := func(op string, call func() error) {
				before := s.k.Log.Total()
				shortBefore := s.t.Ev.Get(fscrypt.EvFnameTooShort)
				var err error
				func() {
					defer func() {
						if p := recover(); p != nil {
							err = fmt.Errorf("Go panic: %v", p)
						}
					}()
					err = call()
				}()
				record(cc.name, op, err)
				var broken error // ext4's checker's verdict on a listing that never ends
				if err == errNoEnd && cc.cfg.fs == kExt4 {
					broken = ext4IndexBroken(s, testDir)
				}
				switch {
				case broken != nil:
					// ext4_dx_readdir on a directory e2fsck would fix:
					// when a leaf fails half-way (an encrypted name
					// shorter than 16 bytes: EUCLEAN), the entries stored
					// before it stay in the tree and next_hash is left as
					// it was, so every getdents64 emits them again and
					// returns them (the error is dropped once entries
					// were copied). The kernel's listing cycles too: a
					// kernel finding, not the model's.
					noEndKernel++
					t.Logf("%s trial %d (%s): getdents never ends, as ext4_dx_readdir would on this directory: %v",
						cc.name, trial, strings.Join(what, ", "), broken)
				case !isErrno(err) || !corruptAllowed[errnoOf(err)]:
					violations++
					t.Errorf("%s trial %d (%s): %s = %v", cc.name, trial, strings.Join(what, ", "), op, err)
				case err == errno.EUCLEAN && s.k.Log.Total() == before && s.t.Ev.Get(fscrypt.EvFnameTooShort) > shortBefore:
					shortNames++
				case err == errno.EUCLEAN && s.k.Log.Total() == before:
					silent++
					t.Errorf("%s trial %d (%s): %s = EUCLEAN with no kernel log line", cc.name, trial, strings.Join(what, ", "), op)
				}
			}
			for _, name := range []string{names[0], names[len(names)/2], names[len(names)-1], "absent", "ENTRY-0000"} {
				do("lstat", func() error { _, err := s.p.Lstat(s.t, testDir+"/"+name); return err })
			}
			do("getdents", func() error { return corruptListBounded(s, testDir, 4*cc.n+100) })
			do("creat", func() error {
				fd, err := s.p.Open(s.t, testDir+"/created", vfs.O_RDWR|vfs.O_CREAT|vfs.O_EXCL, 0o600)
				if err == nil {
					s.p.Close(s.t, fd)
				}
				return err
			})
			do("unlink", func() error { return s.p.Unlink(s.t, testDir+"/"+names[len(names)/3]) })
			do("mkdir", func() error { return s.p.Mkdir(s.t, testDir+"/made", 0o755) })
			if n := s.k.Bugs.Len(); n != 0 {
				violations++
				t.Errorf("%s trial %d (%s): %d BUG reports: %v", cc.name, trial, strings.Join(what, ", "), n, s.k.Bugs.All())
			}
			s.close()
		}
	}
	sort.Strings(errCols)
	var b strings.Builder
	fmt.Fprintf(&b, "corruption campaign: %d corruptions per configuration; outcomes per syscall:\n", trials)
	fmt.Fprintf(&b, "%-30s %-9s", "configuration", "syscall")
	for _, c := range errCols {
		fmt.Fprintf(&b, " %9s", c)
	}
	b.WriteString("\n")
	for _, cc := range corruptConfigs() {
		for _, op := range []string{"lstat", "getdents", "creat", "unlink", "mkdir"} {
			row := table[key{cc.name, op}]
			fmt.Fprintf(&b, "%-30s %-9s", cc.name, op)
			for _, c := range errCols {
				fmt.Fprintf(&b, " %9d", row[c])
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "corruption: %d violations, %d EUCLEAN without a log line, %d EUCLEAN for encrypted names shorter than 16 bytes (silent in the kernel too), %d listings that never end on a corrupted htree directory (the kernel's too)",
		violations, silent, shortNames, noEndKernel)
	t.Log(b.String())
}

// errnoOf returns err as the errno value it wraps (nil for nil).
func errnoOf(err error) error {
	if err == nil {
		return nil
	}
	for _, e := range []error{errno.EUCLEAN, errno.EBADMSG, errno.EIO, errno.ENOENT, errno.EEXIST, errno.ENOSPC, errno.ENOTEMPTY, errno.ENOTDIR} {
		if err == e {
			return e
		}
	}
	return err
}

// ext4IndexBroken runs ext4's directory checker (the htree invariants
// e2fsck -fD restores: index hashes strictly increasing, each leaf's
// entries inside its hash range) on the directory at path.
func ext4IndexBroken(s *system, path string) error {
	inode, err := s.inode(path)
	if err != nil {
		return err
	}
	return ext4.CheckDir(s.t, ext4.EXT4_I(inode))
}

// errNoEnd reports a directory listing that does not end: getdents64
// returned more entries than the directory can hold.
var errNoEnd = fmt.Errorf("NO-END")

// corruptListBounded lists a directory with getdents64 to the end, like
// listDir, but gives up with errNoEnd after more than limit entries, so
// that a listing that never ends is a finding, not a stuck test.
func corruptListBounded(s *system, path string, limit int) error {
	fd, err := s.p.Open(s.t, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer s.p.Close(s.t, fd)
	buf := make([]byte, 1<<16)
	total := 0
	for {
		n, err := s.p.Getdents64(s.t, fd, buf)
		if err != nil || n == 0 {
			return err
		}
		ds, err := vfs.ParseDirents(buf[:n])
		if err != nil {
			return err
		}
		if total += len(ds); total > limit {
			return errNoEnd
		}
	}
}
