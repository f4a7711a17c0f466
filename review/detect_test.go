package review

import (
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// fakeSite is where the fake operations of these tests allocate.
var fakeSite = kmem.NewSite("fake_leaky_op:fake")

// testMachine boots a base machine on f2fs with an encrypted, casefolded
// /d.
func testMachine(t *testing.T) *machine {
	t.Helper()
	m, err := boot(Env{FS: "f2fs", Casefold: true, Encrypt: true}, patch.Set{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.close)
	return m
}

// fakeLeakyOp allocates and loses the buffer: a leak.
func fakeLeakyOp(tk *kernel.Task) {
	if _, err := tk.Kmalloc(fakeSite, 72, kmem.GFPKernel); err != nil {
		panic(err)
	}
}

// fakeDoubleFreeOp frees its buffer twice.
func fakeDoubleFreeOp(tk *kernel.Task) {
	buf, _ := tk.Kmalloc(fakeSite, 32, kmem.GFPKernel)
	tk.Kfree(fakeSite, buf)
	tk.Kfree(fakeSite, buf)
}

// fakeUseAfterFreeOp writes into its buffer after freeing it.
func fakeUseAfterFreeOp(tk *kernel.Task) {
	buf, _ := tk.Kmalloc(fakeSite, 32, kmem.GFPKernel)
	tk.Kfree(fakeSite, buf)
	buf[7] = 0
}

// fakeCleanOp allocates and frees.
func fakeCleanOp(tk *kernel.Task) {
	buf, _ := tk.Kmalloc(fakeSite, 32, kmem.GFPKernel)
	tk.Kfree(fakeSite, buf)
}

func kinds(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.key())
	}
	return strings.Join(out, "; ")
}

func TestDetectorsCatchFakeOps(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   func(*kernel.Task)
		want string // kind and function ("" : clean)
	}{
		{"clean", fakeCleanOp, ""},
		{"double free", fakeDoubleFreeOp, KindDoubleFree + " fake_double_free_op"},
		{"use after free", fakeUseAfterFreeOp, KindUAF + " fake_use_after_free_op"},
		{"BUG", func(tk *kernel.Task) {
			var err error
			func() {
				defer tk.Recover(&err)
				kernel.BUG("fake")
			}()
		}, KindBug},
		{"WARN", func(tk *kernel.Task) { tk.WarnOn(true, "fake warning") }, KindWarning + " detect_test.go:LINE"},
		{"DMA-API", func(tk *kernel.Task) {
			tk.Printk("WARNING: CPU: 0 PID: 1 at kernel/dma/debug.c:1082 check_for_stack+0x1/0x2")
			tk.Printk("DMA-API: qce: device driver maps memory from stack [addr=0xffffc90000a3f000]")
		}, KindDMAStack + " check_for_stack"},
		{"WARN and DMA-API", func(tk *kernel.Task) {
			tk.WarnOn(true, "unrelated")
			tk.Printk("DMA-API: qce: device driver maps memory from stack [addr=0xffffc90000a3f000]")
		}, KindWarning + " detect_test.go:LINE; " + KindDMAStack + " check_for_stack"},
		{"RCU left held", func(tk *kernel.Task) { tk.RCU.ReadLock() }, KindBug + " rcu_read_lock"},
		{"refcount_t underflow", func(tk *kernel.Task) {
			tk.Printk("WARNING: CPU: 0 PID: 1 at lib/refcount.c:28 refcount_warn_saturate: refcount_t: underflow; use-after-free.")
		}, KindRefcount + " refcount_warn_saturate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testMachine(t)
			m.k.Tracker.SetStep(0)
			tc.op(m.t)
			got := kinds(detect(m, 0))
			switch tc.name {
			case "BUG":
				// The function is the test's closure; only the kind is pinned.
				got = strings.Fields(got + " ")[0]
			case "WARN", "WARN and DMA-API":
				// The model's WARN names its file and line.
				if i := strings.Index(got, "detect_test.go:"); i >= 0 {
					j := i + len("detect_test.go:")
					for j < len(got) && got[j] >= '0' && got[j] <= '9' {
						j++
					}
					got = got[:i] + "detect_test.go:LINE" + got[j:]
				}
			}
			if got != tc.want {
				t.Errorf("detect after %s: %q, want %q", tc.name, got, tc.want)
			}
			if again := detect(m, 1); len(again) != 0 {
				t.Errorf("reported twice: %v", again)
			}
		})
	}
}

func TestDetectorReportsStacks(t *testing.T) {
	m := testMachine(t)
	fakeDoubleFreeOp(m.t)
	fs := detect(m, 0)
	if len(fs) != 1 || !strings.Contains(fs[0].Detail, "allocated by fake_double_free_op") ||
		!strings.Contains(fs[0].Detail, "freed by fake_double_free_op") || !strings.Contains(fs[0].Detail, "fake_leaky_op:fake") {
		t.Errorf("double free detail lacks the allocation and free sites: %v", fs)
	}
}

func TestLeakDetector(t *testing.T) {
	m := testMachine(t)
	ref, _ := liveBySite(m)
	m.k.Tracker.SetStep(4)
	fakeCleanOp(m.t)
	if got, objs := liveBySite(m); len(leakFindings(got, ref, objs)) != 0 {
		t.Fatalf("a clean op leaks: %v", leakFindings(got, ref, objs))
	}
	fakeLeakyOp(m.t)
	got, objs := liveBySite(m)
	fs := leakFindings(got, ref, objs)
	if len(fs) != 1 || fs[0].Kind != KindLeak || fs[0].Function != "fake_leaky_op" || fs[0].step != 4 ||
		!strings.Contains(fs[0].Detail, "fake_leaky_op:fake") || !strings.Contains(fs[0].Detail, "72 bytes") {
		t.Errorf("leak findings %+v, want one in fake_leaky_op at step 4", fs)
	}
}

func TestKernelName(t *testing.T) {
	for goName, want := range map[string]string{
		"vfs.GenericCIMatch":                          "generic_ci_match",
		"fscrypt.FnameEncrypt":                        "fscrypt_fname_encrypt",
		"fscrypt.fnameDecrypt":                        "fname_decrypt",
		"vfs.(*DecryptedNamePrealloc).resize":         "decrypted_name_prealloc_resize",
		"f2fs.findInBlock":                            "find_in_block",
		"crypto.SkcipherRequestAllocAt":               "skcipher_request_alloc_at",
		"kfree":                                       "kfree",
		"review.TestDetectorsCatchFakeOps.func1":      "test_detectors_catch_fake_ops",
		"dcache.Dput[...]":                            "dput",
		"fscrypt.(*ReadPath).decrypt":                 "read_path_decrypt",
		"fscrypt.SetupFilename":                       "fscrypt_setup_filename",
		"decrypted_name_prealloc_resize":              "decrypted_name_prealloc_resize",
		"hooks.FileOpen":                              "file_open",
		"crypto.(*SkcipherRequestOnStack[...]).Init":  "skcipher_request_on_stack_init",
		"fscrypt.cryptSeedOnStack":                    "crypt_seed_on_stack",
		"kmem.Kmalloc":                                "kmalloc",
		"ext4.ext4Match":                              "ext4_match",
		"vfs.lookupSlowLocked":                        "lookup_slow_locked",
		"fscrypt.DecryptBio":                          "fscrypt_decrypt_bio",
		"f2fs.(*Inode).lookup":                        "inode_lookup",
		"vfs.doSysOpenat2":                            "do_sys_openat2",
		"fscrypt.fscryptFnameEncryptedSizeForPolicyX": "fscrypt_fname_encrypted_size_for_policy_x",
	} {
		if got := KernelName(goName); got != want {
			t.Errorf("KernelName(%q) = %q, want %q", goName, got, want)
		}
	}
}

// TestRefcountDetector: a dput without its dget is a refcount finding in
// dput (the model's WARN_ON_ONCE(d_lockref.count <= 0)).
func TestRefcountDetector(t *testing.T) {
	m := testMachine(t)
	if r := (Step{Op: OpCreate, A: "f"}).run(m); r.err != nil {
		t.Fatal(r.err)
	}
	detect(m, 0)
	d, err := m.p.LookupDentry(m.t, "/d/f", false)
	if err != nil {
		t.Fatal(err)
	}
	dput(m.t, d)
	if fs := detect(m, 1); len(fs) != 0 {
		t.Fatalf("a balanced dget/dput: %v", fs)
	}
	var e error
	func() {
		defer m.t.Recover(&e)
		dput(m.t, d)
	}()
	if got := kinds(detect(m, 2)); got != KindRefcount+" dput" {
		t.Errorf("a dput too many: %q, want %q", got, KindRefcount+" dput")
	}
}
