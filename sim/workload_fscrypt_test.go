package sim

import (
	"strings"
	"testing"
)

// quick runs w with few operations and returns the first thread group.
func quick(t *testing.T, name string, params map[string]string, ops int) *Group {
	t.Helper()
	w, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Config{Workload: w, Ops: ops, CountOps: ops, Count: 1, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Groups[0]
}

func byVariant(g *Group) map[string]*Measurement {
	m := map[string]*Measurement{}
	for _, x := range g.Measurements {
		m[x.Variant] = x
	}
	return m
}

func TestFnameWorkload(t *testing.T) {
	g := byVariant(quick(t, "fname", nil, 50))
	if got := g["base"].Events["skcipher_request_alloc"]; got != 2 {
		t.Errorf("base: %v request allocations per name, want 2 (encrypt + decrypt)", got)
	}
	// v2 as posted still allocates the encryption request, and never
	// frees it; its decryption and all of upstream are on the stack.
	for v, want := range map[string]float64{"v2": 1, "upstream": 0} {
		if got := g[v].Kmallocs; got != want {
			t.Errorf("%s: %v kmallocs per name, want %v", v, got, want)
		}
		if a, f := g[v].Events["skcipher_request_alloc"], g[v].Events["skcipher_request_free"]; a != want || f != 0 {
			t.Errorf("%s: %v request allocations and %v frees per name, want %v and 0", v, a, f, want)
		}
		if g[v].Errors != 0 {
			t.Errorf("%s: %d errors: %s", v, g[v].Errors, g[v].FirstError)
		}
	}
}

func TestFnameWorkloadAsyncEngine(t *testing.T) {
	g := byVariant(quick(t, "fname", map[string]string{"engine": "async"}, 20))
	if g["base"].Errors != 0 || g["base"].Events["crypto_async_submit"] != 2 {
		t.Errorf("base with the engine: errors=%d events=%v", g["base"].Errors, g["base"].Events)
	}
	if g["v2"].Errors != 20 || len(g["v2"].Bugs) == 0 || !strings.Contains(g["v2"].Bugs[0], "reqsize") {
		t.Errorf("v2 with the engine: errors=%d bugs=%v", g["v2"].Errors, g["v2"].Bugs)
	}
	if g["upstream"].Errors != 0 || g["upstream"].Events["crypto_async_submit"] != 0 {
		t.Errorf("upstream with the engine: errors=%d events=%v", g["upstream"].Errors, g["upstream"].Events)
	}
}

func TestV1KDFWorkload(t *testing.T) {
	g := byVariant(quick(t, "v1kdf", map[string]string{"keysize": "32"}, 50))
	if g["base"].Events["crypto_tfm_alloc"] != 1 || g["sync"].Events["skcipher_request_on_stack"] != 1 {
		t.Errorf("base %v sync %v", g["base"].Events, g["sync"].Events)
	}
	if g["aeslib"].Kmallocs != 0 || g["aeslib"].Events["crypto_tfm_alloc"] != 0 || g["aeslib"].Events["aes_block_ops"] != 2 {
		t.Errorf("aeslib %v", g["aeslib"].Events)
	}
}

func TestReadWorkload(t *testing.T) {
	g := quick(t, "read", map[string]string{"mib": "1"}, 1)
	for _, m := range g.Measurements {
		if m.Errors != 0 {
			t.Errorf("%s: %s", m.Variant, m.FirstError)
		}
		if len(m.MBPerSec) != 1 || m.MBPerSec[0] <= 0 {
			t.Errorf("%s: MB/s = %v", m.Variant, m.MBPerSec)
		}
	}
}
