package events

import (
	"sync"
	"testing"
)

var (
	evA = Register("test_a", "first test event")
	evB = Register("test_b", "second test event")
)

func TestCountAndDump(t *testing.T) {
	c := New()
	c.Inc(evB)
	c.Add(evA, 3)
	c.Inc(evB)
	if got, want := c.String(), "test_a=3 test_b=2"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if c.Get(evA) != 3 || c.Get(evB) != 2 {
		t.Fatalf("Get: %d %d", c.Get(evA), c.Get(evB))
	}
	m := c.Map()
	if len(m) != 2 || m["test_a"] != 3 {
		t.Fatalf("Map() = %v", m)
	}
	if e, ok := Lookup("test_b"); !ok || e != evB {
		t.Fatalf("Lookup(test_b) = %v, %v", e, ok)
	}
	if evA.Help() != "first test event" {
		t.Fatalf("Help = %q", evA.Help())
	}
}

func TestNilShardIsDisabled(t *testing.T) {
	var c *Counters
	c.Inc(evA)
	c.Add(evB, 10)
	if c.Get(evA) != 0 || c.Enabled() {
		t.Fatal("nil shard counted")
	}
	if c.String() != "(none)" {
		t.Fatalf("nil String() = %q", c.String())
	}
}

func TestSubAndMerge(t *testing.T) {
	c := New()
	c.Add(evA, 5)
	snap := c.Clone()
	c.Add(evA, 2)
	c.Inc(evB)
	d := c.Sub(snap)
	if d.Get(evA) != 2 || d.Get(evB) != 1 {
		t.Fatalf("Sub = %v", d)
	}
	d.Merge(snap)
	if d.Get(evA) != 7 {
		t.Fatalf("Merge = %v", d)
	}
	d.Reset()
	if d.String() != "(none)" {
		t.Fatalf("after Reset: %v", d)
	}
}

func TestDuplicateRegisterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate Register did not panic")
		}
	}()
	Register("test_a", "dup")
}

func TestShardsMergeConcurrentWorkers(t *testing.T) {
	var s Shards
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		c := s.Shard()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				c.Inc(evA)
			}
		}()
	}
	wg.Wait()
	if got := s.Total().Get(evA); got != 8000 {
		t.Fatalf("total = %d, want 8000", got)
	}
}

func BenchmarkIncEnabled(b *testing.B) {
	c := New()
	for i := 0; i < b.N; i++ {
		c.Inc(evA)
	}
}

func BenchmarkIncDisabled(b *testing.B) {
	var c *Counters
	for i := 0; i < b.N; i++ {
		c.Inc(evA)
	}
}
