package tests

import (
	"strconv"
	"testing"

	"github.com/vfslab/vfslab/errno"
)

// TestFailNthSyscalls drives the kernel's fault-injection interface the
// way syzkaller and the fault-injection documentation do for one system
// call: with failslab's ignore-gfp-wait off, write N to /proc/self/fail-nth,
// make the call, read fail-nth back ("0" means the fault was injected),
// for N = 1, 2, ... until a call completes with no fault. Every injected
// failure must fail the call with ENOMEM and leave the name absent; a call
// that succeeds leaves it present.
func TestFailNthSyscalls(t *testing.T) {
	for _, cfg := range []config{{fs: kExt4}, {fs: kF2fs, casefold: true}, {fs: kExt4, encrypt: true}, {fs: kF2fs, encrypt: true}} {
		injected := 0
		for n := 1; ; n++ {
			if n > 500 {
				t.Fatalf("%s: mkdir still reaches fault %d", cfg, n)
			}
			s := mustBoot(t, cfg)
			s.k.Failslab.SetIgnoreGFPWait(false)
			if _, err := s.t.ProcFailNthWrite([]byte(strconv.Itoa(n))); err != nil {
				t.Fatal(err)
			}
			err := s.p.Mkdir(s.t, testDir+"/sub", 0o755)
			hit := s.t.ProcFailNthRead() == "0\n"
			s.t.ProcFailNthWrite([]byte("0"))
			_, serr := s.p.Stat(s.t, testDir+"/sub")
			if !hit {
				if err != nil || serr != nil {
					t.Fatalf("%s: mkdir with no fault: %v, stat %v", cfg, err, serr)
				}
				break
			}
			injected++
			if err != errno.ENOMEM {
				t.Errorf("%s: fault %d: mkdir returned %v, want ENOMEM", cfg, n, err)
			}
			if serr != errno.ENOENT {
				t.Errorf("%s: fault %d: mkdir failed but stat says %v", cfg, n, serr)
			}
			if err := s.checkDir(testDir); err != nil {
				t.Errorf("%s: fault %d: %v", cfg, n, err)
			}
		}
		if injected == 0 {
			t.Errorf("%s: mkdir reached no fault-injection point", cfg)
		}
		t.Logf("%s: mkdir has %d fault-injection points", cfg, injected)
	}
}
