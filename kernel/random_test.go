package kernel

import (
	"bytes"
	"sync"
	"testing"
)

func TestGetRandomBytesSeeded(t *testing.T) {
	draw := func(seed uint64, seeded bool) []byte {
		k := New()
		if seeded {
			k.Seed(seed)
		}
		b := make([]byte, 48)
		k.GetRandomBytes(b[:16])
		k.GetRandomBytes(b[16:])
		return b
	}
	a, b := draw(7, true), draw(7, true)
	if !bytes.Equal(a, b) {
		t.Fatal("one seed gave two streams")
	}
	if bytes.Equal(a, draw(8, true)) {
		t.Fatal("two seeds gave one stream")
	}
	if !bytes.Equal(draw(0, false), draw(0, true)) {
		t.Fatal("a new machine is not seeded with 0")
	}
	if bytes.Equal(a[:16], a[16:32]) || bytes.Count(a, []byte{0}) > 8 {
		t.Fatalf("stream looks degenerate: %x", a)
	}
}

func TestGetRandomU32Below(t *testing.T) {
	k := New()
	var seen [10]int
	for i := 0; i < 10000; i++ {
		v := k.GetRandomU32Below(10)
		if v >= 10 {
			t.Fatalf("%d out of range", v)
		}
		seen[v]++
	}
	for v, n := range seen {
		if n < 800 || n > 1200 {
			t.Fatalf("value %d drawn %d times of 10000", v, n)
		}
	}
}

// TestGetRandomBytesConcurrent: tasks draw at once (run with -race); every
// byte drawn is one of the stream's, none twice.
func TestGetRandomBytesConcurrent(t *testing.T) {
	k := New()
	k.Seed(3)
	const n, per = 8, 100
	out := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < per; j++ {
				b := make([]byte, 16)
				k.GetRandomBytes(b)
				out[i] = append(out[i], b...)
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, o := range out {
		for j := 0; j < len(o); j += 16 {
			s := string(o[j : j+16])
			if seen[s] {
				t.Fatal("a 16-byte draw repeated")
			}
			seen[s] = true
		}
	}
	ref := New()
	ref.Seed(3)
	all := make([]byte, n*per*16)
	ref.GetRandomBytes(all)
	for j := 0; j < len(all); j += 16 {
		if !seen[string(all[j:j+16])] {
			t.Fatal("concurrent draws are not the seeded stream's blocks")
		}
	}
}
