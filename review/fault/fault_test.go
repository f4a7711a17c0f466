package fault

import (
	"strings"
	"testing"
	"time"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
)

var siteA, siteB = kmem.NewSite("fault_test:a"), kmem.NewSite("fault_test:b")

// twoAllocs is a fake syscall: an allocation at a, then one at b.
func twoAllocs(t *kernel.Task) error {
	a, err := t.Kmalloc(siteA, 8, kmem.GFPKernel)
	if err != nil {
		return err
	}
	defer t.Kfree(siteA, a)
	b, err := t.Kmalloc(siteB, 8, kmem.GFPKernel)
	if err != nil {
		return err
	}
	t.Kfree(siteB, b)
	return nil
}

func TestRun(t *testing.T) {
	k := kernel.New()
	tk := k.NewTask("fault_test")
	defer tk.Exit()
	fn := func() error { return twoAllocs(tk) }
	for _, tc := range []struct {
		spec Spec
		hit  bool
		err  error
	}{
		{Spec{}, false, nil},
		{Spec{Nth: 1}, true, errno.ENOMEM},
		{Spec{Nth: 2}, true, errno.ENOMEM},
		{Spec{Nth: 3}, false, nil},
		{Spec{Site: "fault_test:b"}, true, errno.ENOMEM},
		{Spec{Site: "fault_test:none"}, false, nil},
	} {
		o := Run(tk, tc.spec, 0, fn)
		if o.Hit != tc.hit || o.Err != tc.err || o.Finding != "" {
			t.Errorf("%s: %+v, want hit %v err %v", tc.spec, o, tc.hit, tc.err)
		}
		// Disarmed afterwards.
		if err := twoAllocs(tk); err != nil || tk.Fail != nil || tk.ProcFailNthRead() != "0\n" || !k.Failslab.IgnoreGFPWait() {
			t.Errorf("%s: not disarmed: %v", tc.spec, err)
		}
	}
	if o := Run(tk, Spec{}, 0, func() error { panic("boom") }); !strings.Contains(o.Finding, "Go panic: boom") {
		t.Errorf("panic: %+v", o)
	}
	release := make(chan struct{})
	defer close(release)
	if o := Run(tk, Spec{}, 20*time.Millisecond, func() error { <-release; return nil }); !o.Hang || !strings.HasPrefix(o.Finding, "hang") {
		t.Errorf("hang: %+v", o)
	}
}

func TestKernelRule(t *testing.T) {
	ext4 := Env{FS: "ext4", Casefold: true, Encrypt: true}
	if KernelRule(ext4, Call{Kind: Lookup}, errno.ENOENT, nil, "", "", "") == "" {
		t.Error("ext4 casefold+encrypt: a lookup missing under ENOMEM is ext4_match's rule")
	}
	for _, env := range []Env{{FS: "f2fs", Casefold: true, Encrypt: true}, {FS: "ext4", Casefold: true}} {
		if r := KernelRule(env, Call{Kind: Lookup}, errno.ENOENT, nil, "", "", ""); r != "" {
			t.Errorf("%+v: rule %q, want none", env, r)
		}
	}
	if !Acceptable(errno.ENOMEM, nil) || !Acceptable(errno.ENOENT, errno.ENOENT) || Acceptable(errno.ENOENT, nil) {
		t.Error("Acceptable: ENOMEM or the reference's result, nothing else")
	}
}
