package crypto

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/errno"
)

// TestTemplateNamesGeneric checks the instance names, priorities and request
// sizes the kernel gives its templates over aes-generic (a machine without
// AES-NI).
func TestTemplateNamesGeneric(t *testing.T) {
	api := NewAPIOptions(Options{NoArchDrivers: true})
	tk := newTask()
	type row struct {
		Driver   string
		Priority int
		ReqSize  int
		IVSize   int
		Keys     [2]int
	}
	want := map[string]row{
		"ecb(aes)":                {"ecb(aes-generic)", 100, 0, 0, [2]int{16, 32}},
		"cbc(aes)":                {"cbc(aes-generic)", 100, 0, 16, [2]int{16, 32}},
		"cts(cbc(aes))":           {"cts(cbc(aes-generic))", 100, 168, 16, [2]int{16, 32}},
		"xts(aes)":                {"xts(ecb(aes-generic))", 100, 168, 16, [2]int{32, 64}},
		"essiv(cbc(aes),sha256)":  {"essiv(cbc(aes-generic),sha256-generic)", 100, 80, 16, [2]int{16, 32}},
		"adiantum(xchacha12,aes)": {"adiantum(xchacha12-lib,aes-generic)", 260, 144, 32, [2]int{32, 32}},
		"hctr2(aes)":              {"hctr2_base(xctr(aes-generic),polyval-lib)", 100, 272, 32, [2]int{16, 32}},
	}
	got := map[string]row{}
	for name := range want {
		tfm, err := api.AllocSkcipher(tk, name, 0, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = row{tfm.DriverName(), tfm.Alg().Priority(), tfm.ReqSize(), tfm.IVSize(), [2]int{tfm.MinKeySize(), tfm.MaxKeySize()}}
		if tfm.AlgName() != name {
			t.Errorf("cra_name %q, want %q", tfm.AlgName(), name)
		}
		if tfm.Alg().Flags()&CRYPTO_ALG_INSTANCE == 0 || tfm.Alg().Template() == "" {
			t.Errorf("%s: not marked as an instance: %v", name, tfm.Alg())
		}
		tfm.Free(tk)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("instances (-want +got):\n%s", d)
	}
}

// TestArchDrivers checks that with AES-NI the arch drivers win by priority
// and that the templates then build on them.
func TestArchDrivers(t *testing.T) {
	if !aes.Accelerated() {
		t.Skip("no AES-NI: the arch drivers are not registered")
	}
	api := NewAPI()
	tk := newTask()
	want := map[string]string{
		"aes":                     "aes-aesni",
		"ecb(aes)":                "ecb-aes-aesni",
		"cbc(aes)":                "cbc-aes-aesni",
		"cts(cbc(aes))":           "cts-cbc-aes-aesni",
		"xts(aes)":                aes.BestXTSImpl().String(),
		"essiv(cbc(aes),sha256)":  "essiv(cbc-aes-aesni,sha256-generic)",
		"adiantum(xchacha12,aes)": "adiantum(xchacha12-lib,aes-aesni)",
		"hctr2(aes)":              "hctr2_base(xctr(aes-aesni),polyval-lib)",
	}
	got := map[string]string{}
	for name := range want {
		if name == "aes" {
			a, err := api.Lookup(tk, name, CRYPTO_ALG_TYPE_CIPHER, CRYPTO_ALG_TYPE_MASK)
			if err != nil {
				t.Fatal(err)
			}
			got[name] = a.DriverName()
			continue
		}
		tfm, err := api.AllocSkcipher(tk, name, 0, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = tfm.DriverName()
		tfm.Free(tk)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("drivers (-want +got):\n%s", d)
	}
	// The template still works when asked for explicitly: over the
	// aesni cbc driver, named after it, at its priority.
	tfm, err := api.AllocSkcipher(tk, "cts(cbc-aes-aesni)", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tfm.DriverName() != "cts(cbc-aes-aesni)" || tfm.AlgName() != "cts(cbc(aes))" || tfm.Alg().Priority() != 400 {
		t.Errorf("explicit template: %v", tfm.Alg())
	}
	tfm.Free(tk)
	// Driver names select exactly, even below the best priority.
	tfm, err = api.AllocSkcipher(tk, "xts(ecb(aes-generic))", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tfm.DriverName() != "xts(ecb(aes-generic))" || tfm.AlgName() != "xts(aes)" {
		t.Errorf("explicit generic xts: %v", tfm.Alg())
	}
	tfm.Free(tk)
	tfm, err = api.AllocSkcipher(tk, "xts(aes)", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tfm.DriverName() != aes.BestXTSImpl().String() {
		t.Errorf("after instantiating xts(ecb(aes-generic)), xts(aes) is %s", tfm.DriverName())
	}
	tfm.Free(tk)
}

// TestTemplateCaching: the first allocation instantiates (the instance and
// the inner instances it needs), the second instantiates nothing.
func TestTemplateCaching(t *testing.T) {
	api := NewAPIOptions(Options{NoArchDrivers: true})
	tk := newTask()
	tfm, err := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := tk.Ev.Get(EvTmplInstance); n != 2 {
		t.Errorf("first allocation instantiated %d templates, want 2 (cbc and cts)", n)
	}
	before := len(api.Algs())
	tfm2, err := api.AllocSkcipher(tk, "cts(cbc(aes))", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := tk.Ev.Get(EvTmplInstance); n != 2 {
		t.Errorf("second allocation instantiated templates: count %d", n)
	}
	if len(api.Algs()) != before {
		t.Errorf("second allocation registered algorithms")
	}
	if tfm.Alg() != tfm2.Alg() {
		t.Errorf("two allocations got different instances")
	}
	// Two tfms of the instance, each with a cbc child: refcounts.
	if got := tfm.Alg().Refcnt(); got != 2 {
		t.Errorf("cts refcnt %d, want 2", got)
	}
	cbc := tfm.Child().Alg()
	if got := cbc.Refcnt(); got != 3 { // two child tfms + the cts instance's spawn
		t.Errorf("cbc refcnt %d, want 3", got)
	}
	tfm.Free(tk)
	tfm2.Free(tk)
	if tfm.Alg().Refcnt() != 0 || cbc.Refcnt() != 1 {
		t.Errorf("after free: cts %d cbc %d", tfm.Alg().Refcnt(), cbc.Refcnt())
	}
	// An instance over an instance: xts needs ecb, made by xts itself.
	if _, err := api.Lookup(tk, "xts(aes)", CRYPTO_ALG_TYPE_SKCIPHER, CRYPTO_ALG_TYPE_SKCIPHER_MASK); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(api.String(), "ecb(aes) driver=ecb(aes-generic) prio=100 type=lskcipher") {
		t.Errorf("ecb instance not registered:\n%s", api)
	}
	// Each cts tfm has a cbc child, which has an aes cipher child.
	if n := tk.Ev.Get(EvTfmAlloc); n != 6 || tk.Ev.Get(EvTfmFree) != 6 {
		t.Errorf("tfm alloc/free %d/%d, want 6/6", n, tk.Ev.Get(EvTfmFree))
	}
	if tk.Stats.Live() != 0 {
		t.Errorf("tfm memory leaked: %s", tk.Stats)
	}
}

func TestLookupErrors(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	for _, c := range []struct {
		name string
		want error
	}{
		{"nosuch", errno.ENOENT},
		{"nosuch(aes)", errno.ENOENT},
		{"cbc(nosuch)", errno.ENOENT},
		{"cts(ecb(aes))", errno.EINVAL},
		{"xts(cbc(aes))", errno.EINVAL},
		{"essiv(cbc(aes),sha1)", errno.ENOENT},
		{"essiv(cbc(aes))", errno.EINVAL},
		{"adiantum(xchacha20,aes)", errno.ENOENT},
		{"cts(cbc(aes)", errno.ENOENT},
		{"cts()", errno.ENOENT},
		{"aes", errno.ENOENT}, // a cipher is not an skcipher
		{strings.Repeat("x", 64), errno.ENAMETOOLONG},
	} {
		tfm, err := api.AllocSkcipher(tk, c.name, 0, 0)
		if err != c.want {
			t.Errorf("%q: %v, want %v", c.name, err, c.want)
		}
		if tfm != nil {
			t.Errorf("%q: got a tfm with an error", c.name)
		}
	}
	if tk.Stats.Live() != 0 {
		t.Errorf("failed allocations leaked: %s", tk.Stats)
	}
}

// TestTypeMask checks the (flags ^ type) & mask rule, the internal flag and
// the priority order with algorithms registered by the test.
func TestTypeMask(t *testing.T) {
	api := NewAPI()
	tk := newTask()
	reg := func(driver string, prio int, flags uint32) {
		t.Helper()
		_, err := api.RegisterSkcipher(SkcipherAlgDef{Name: "toy(x)", DriverName: driver, Priority: prio, Flags: flags,
			BlockSize: 1, MinKeySize: 0, MaxKeySize: 16, New: func() SkcipherImpl { return new(toyCipher) }})
		if err != nil {
			t.Fatal(err)
		}
	}
	reg("toy-low", 100, 0)
	reg("toy-hw", 300, CRYPTO_ALG_KERN_DRIVER_ONLY)
	reg("toy-internal", 900, CRYPTO_ALG_INTERNAL)
	cases := []struct {
		typ, mask uint32
		want      string
	}{
		{0, 0, "toy-hw"},
		{0, CRYPTO_ALG_KERN_DRIVER_ONLY, "toy-low"},
		{CRYPTO_ALG_KERN_DRIVER_ONLY, CRYPTO_ALG_KERN_DRIVER_ONLY, "toy-hw"},
		{CRYPTO_ALG_INTERNAL, CRYPTO_ALG_INTERNAL, "toy-internal"},
		{CRYPTO_ALG_INTERNAL, 0, "toy-internal"},
	}
	for _, c := range cases {
		tfm, err := api.AllocSkcipher(tk, "toy(x)", c.typ, c.mask)
		if err != nil {
			t.Errorf("type %#x mask %#x: %v", c.typ, c.mask, err)
			continue
		}
		if tfm.DriverName() != c.want {
			t.Errorf("type %#x mask %#x: %s, want %s", c.typ, c.mask, tfm.DriverName(), c.want)
		}
		tfm.Free(tk)
	}
	// Equal priorities: the later registration wins, as the kernel's
	// list_add at the head of crypto_alg_list makes it.
	reg("toy-low2", 100, 0)
	tfm, err := api.AllocSkcipher(tk, "toy(x)", 0, CRYPTO_ALG_KERN_DRIVER_ONLY)
	if err != nil || tfm.DriverName() != "toy-low2" {
		t.Errorf("tie: %v %v", tfm, err)
	}
	tfm.Free(tk)
	if _, err := api.RegisterSkcipher(SkcipherAlgDef{Name: "toy(x)", DriverName: "toy-low", BlockSize: 1, New: func() SkcipherImpl { return new(toyCipher) }}); err != errno.EEXIST {
		t.Errorf("duplicate driver: %v", err)
	}
	if _, err := api.RegisterSkcipher(SkcipherAlgDef{Name: "toy(x)", DriverName: "toy-async", Flags: CRYPTO_ALG_ASYNC, BlockSize: 1, New: func() SkcipherImpl { return new(toyCipher) }}); err != errno.EINVAL {
		t.Errorf("async external: %v", err)
	}
}

// toyCipher is a test algorithm registered through RegisterSkcipher: each
// byte is XORed with the key byte at its position (cycled) and its index.
type toyCipher struct{ key []byte }

func (c *toyCipher) SetKey(k []byte) error {
	c.key = append([]byte(nil), k...)
	return nil
}

func (c *toyCipher) Encrypt(dst, src, iv []byte) error {
	for i := range src {
		k := byte(i)
		if len(c.key) > 0 {
			k ^= c.key[i%len(c.key)]
		}
		dst[i] = src[i] ^ k
	}
	return nil
}

func (c *toyCipher) Decrypt(dst, src, iv []byte) error { return c.Encrypt(dst, src, iv) }
