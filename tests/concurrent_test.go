package tests

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vfslab/vfslab/vfs"
)

// TestConcurrentSyscalls: tasks of their own processes create, write,
// rename, list and unlink at once, in their own directories and in one
// shared directory, on f2fs and ext4 (casefolded and encrypted): no error,
// no race (go test -race), and afterwards every directory passes the
// checker and the shared one holds exactly the names the tasks left.
func TestConcurrentSyscalls(t *testing.T) {
	const tasks, files = 4, 120
	for _, fs := range []fsKind{kF2fs, kExt4} {
		cfg := config{fs: fs, casefold: true, encrypt: true}
		t.Run(cfg.String(), func(t *testing.T) {
			s := mustBoot(t, cfg)
			if err := s.p.Mkdir(s.t, testDir+"/shared", 0o755); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make([]error, tasks)
			for w := 0; w < tasks; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tk := s.k.NewTask(fmt.Sprintf("worker/%d", w))
					defer tk.Exit()
					p := s.sys.NewProc(tk, nil)
					defer p.Exit(tk)
					ws := &system{cfg: cfg, k: s.k, t: tk, sys: s.sys, p: p}
					errs[w] = worker(ws, w, files)
				}()
			}
			wg.Wait()
			for w, err := range errs {
				if err != nil {
					t.Fatalf("task %d: %v", w, err)
				}
			}
			var want []string
			for w := 0; w < tasks; w++ {
				if err := s.checkDir(fmt.Sprintf("%s/own%d", testDir, w)); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < files; i += 2 {
					want = append(want, fmt.Sprintf("Moved-%d-%03d", w, i))
				}
			}
			sort.Strings(want)
			if err := s.checkDir(testDir + "/shared"); err != nil {
				t.Fatal(err)
			}
			ds, err := s.listDir(testDir + "/shared")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range ds {
				got = append(got, d.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("shared directory (-want +got):\n%s", diff)
			}
			s.noBugs(t)
		})
	}
}

// worker is one task's share of TestConcurrentSyscalls.
func worker(s *system, w, files int) error {
	own := fmt.Sprintf("%s/own%d", testDir, w)
	if err := s.p.Mkdir(s.t, own, 0o755); err != nil {
		return err
	}
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("%s/file-%03d", own, i)
		if err := s.creat(name, []byte(name)); err != nil {
			return fmt.Errorf("creat %s: %w", name, err)
		}
		if i%2 == 0 {
			if err := s.p.Rename(s.t, name, fmt.Sprintf("%s/shared/moved-%d-%03d", testDir, w, i), 0); err != nil {
				return fmt.Errorf("rename %s: %w", name, err)
			}
		}
		if i%10 == 9 {
			if _, err := s.listDir(testDir + "/shared"); err != nil {
				return err
			}
		}
	}
	// Case-insensitive names: rename each moved file to its capitalised
	// form through its lower-case name, then read it back.
	for i := 0; i < files; i += 2 {
		from := fmt.Sprintf("%s/shared/MOVED-%d-%03d", testDir, w, i)
		to := fmt.Sprintf("%s/shared/Moved-%d-%03d.tmp", testDir, w, i)
		if err := s.p.Rename(s.t, from, to, 0); err != nil {
			return fmt.Errorf("rename %s: %w", from, err)
		}
		if err := s.p.Rename(s.t, to, to[:len(to)-4], vfs.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("rename %s: %w", to, err)
		}
		data, err := s.readFile(to[:len(to)-4])
		if want := fmt.Sprintf("%s/file-%03d", own, i); err != nil || string(data) != want {
			return fmt.Errorf("read %s: %q %v", to, data, err)
		}
	}
	for i := 1; i < files; i += 2 {
		if err := s.p.Unlink(s.t, fmt.Sprintf("%s/FILE-%03d", own, i)); err != nil {
			return err
		}
	}
	return nil
}
