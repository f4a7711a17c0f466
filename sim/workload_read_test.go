package sim

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vfslab/vfslab/fscrypt"
)

// processCPU is the process's user+system CPU time in ns (getrusage).
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

var readBenchMiB = flag.Int("sim.readmib", 16, "file size in MiB of BenchmarkReadWorkload")

// BenchmarkReadWorkload runs the read workload's operation (seed 003's
// experiment: a cold read(2) of an encrypted ext4 file over a loop device)
// for every crypto-bio variant, with the per-data-unit requests of seed
// 003's kernel (requests=base) and on the stack (upstream):
//
//	go test -run '^$' -bench ReadWorkload ./sim -cpuprofile cpu.out -args -sim.readmib=64
func BenchmarkReadWorkload(b *testing.B) {
	for _, req := range []string{"base", "upstream"} {
		for _, v := range fscrypt.CryptoBioPatch.Variants {
			c := allocCase{"read", map[string]string{"mib": strconv.Itoa(*readBenchMiB), "requests": req}, v.Name}
			b.Run(c.String(), func(b *testing.B) {
				s, _ := allocSystem(b, c, false)
				defer s.close()
				op := s.ops[0]
				if err := op(0); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(*readBenchMiB) << 20)
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				for i := 0; i < b.N; i++ {
					if err := op(i + 1); err != nil {
						b.Fatal(err)
					}
				}
				// CPU time of the whole process (every task's
				// goroutine) per operation: on a loaded machine the
				// wall time measures the other processes too.
				cpu := float64(processCPU()-cpu0) / float64(b.N)
				b.ReportMetric(cpu, "cpu-ns/op")
				b.ReportMetric(float64(*readBenchMiB<<20)/cpu*1e3, "cpu-MB/s")
			})
		}
	}
}

// TestReadCorruptPagesCounted: the data check counts wrong pages instead
// of failing: a buffer with its second page changed has one bad page, and
// the timed runs' sampling (the first two pages of each buffer) sees it.
func TestReadCorruptPagesCounted(t *testing.T) {
	in := &readInst{want: make([]byte, 64<<10)}
	for i := range in.want {
		in.want[i] = byte(i)
	}
	got := append([]byte(nil), in.want[16<<10:48<<10]...)
	if n := in.check(got, 16<<10, true); n != 0 {
		t.Fatalf("%d bad pages in a right buffer", n)
	}
	got[4096+7] ^= 1
	got[5*4096] ^= 1
	if n := in.check(got, 16<<10, true); n != 2 {
		t.Errorf("all pages checked: %d bad, want 2", n)
	}
	if n := in.check(got, 16<<10, false); n != 1 {
		t.Errorf("sampled: %d bad, want 1 (the second page)", n)
	}
}

// TestExplainRead: the explanation is computed from the run: the order of
// the MB/s medians, the alike counts, each variant's requests and hops,
// and each pair's cost per differing event.
func TestExplainRead(t *testing.T) {
	mk := func(v string, ns, requests, kmallocs, works float64) *Measurement {
		m := &Measurement{Variant: v, Kmallocs: kmallocs, Events: map[string]float64{
			"submit_bio": 4, "submit_bio_bytes": 1 << 20, "loop_request": 4, "loop_read_bytes": 1 << 20,
			"copy_to_user_bytes": 1 << 20, "fscrypt_data_unit_crypt": 256, "skcipher_decrypt": requests,
			"fscrypt_decrypt_work": works,
		}}
		for i := 0; i < 5; i++ {
			m.NsPerOp = append(m.NsPerOp, ns+float64(i))
			m.OpsPerSec = append(m.OpsPerSec, 1e9/(ns+float64(i)))
			m.MBPerSec = append(m.MBPerSec, float64(1<<20)/(ns+float64(i))*1e3)
		}
		return m
	}
	g := &Group{Threads: 1, Measurements: []*Measurement{
		mk("workqueue", 1_040_000, 256, 260, 4),
		mk("inline", 1_000_000, 256, 260, 0),
		mk("chain", 1_100_000, 256, 520, 0),
		mk("bio", 900_000, 4, 4, 0),
	}}
	g.Measurements[3].Events["read_corrupt_pages"] = 252
	got := explainRead(g)
	for _, want := range []string{
		"order here: bio 1165 MB/s > inline 1049 MB/s > workqueue 1008 MB/s > chain 953 MB/s",
		"4 bios of 256 KiB", "256 data units decrypted",
		"workqueue 256 skcipher requests, 260 kmallocs, 4 decrypt works queued",
		"bio 4 skcipher requests, 4 kmallocs, 0 decrypt works queued, 252 pages read back wrong",
		"hop per bio costs 10.0 us", "a per-data-unit request costs 0.40 us", "260 extra kmallocs (chained requests and their IVs) costs 0.38 us",
		"largest significant gap, 11.1% of the fastest variant's op, comes from the number of requests (inline vs bio)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("explanation lacks %q:\n%s", want, got)
		}
	}
	// Overlapping samples: no gap is significant, and it says so.
	for _, m := range g.Measurements {
		for i := range m.NsPerOp {
			m.NsPerOp[i] = 1_000_000 + float64(i*100_000)
		}
	}
	if s := explainRead(g); !strings.Contains(s, "No gap between the pairs is significant") {
		t.Errorf("with overlapping samples: %s", s)
	}
	g.Measurements[0].Events = nil
	if s := explainRead(g); s != "" {
		t.Errorf("without a counting run: %q", s)
	}
}

var readInterleave = flag.Int("sim.readinterleave", 0, "rounds of TestReadInterleavedCPU (0: skip)")

// TestReadInterleavedCPU measures the read workload's four variants in the
// same time window: round after round, one operation of each variant in
// turn, each timed by the process's CPU time and by the wall clock; it
// logs each variant's median and its ratio to workqueue. On a shared,
// loaded machine the CPU time is the steadier of the two. Off by default:
//
//	go test -run TestReadInterleavedCPU ./sim -v -args -sim.readinterleave=40 -sim.readmib=16
func TestReadInterleavedCPU(t *testing.T) {
	if *readInterleave <= 0 {
		t.Skip("-sim.readinterleave=N runs it")
	}
	for _, req := range []string{"base", "upstream"} {
		var ops []func(int) error
		var names []string
		for _, v := range fscrypt.CryptoBioPatch.Variants {
			c := allocCase{"read", map[string]string{"mib": strconv.Itoa(*readBenchMiB), "requests": req}, v.Name}
			s, _ := allocSystem(t, c, false)
			defer s.close()
			if err := s.ops[0](0); err != nil {
				t.Fatal(err)
			}
			ops, names = append(ops, s.ops[0]), append(names, v.Name)
		}
		cpu := make([][]float64, len(ops))
		wall := make([][]float64, len(ops))
		for r := 1; r <= *readInterleave; r++ {
			for i, op := range ops {
				c0, w0 := processCPU(), time.Now()
				if err := op(r); err != nil {
					t.Fatal(err)
				}
				cpu[i] = append(cpu[i], float64(processCPU()-c0))
				wall[i] = append(wall[i], float64(time.Since(w0)))
			}
		}
		bytes := float64(*readBenchMiB << 20)
		var b strings.Builder
		fmt.Fprintf(&b, "requests=%s, %d MiB, %d interleaved rounds (median):", req, *readBenchMiB, *readInterleave)
		cw, ww := median(cpu[0]), median(wall[0])
		for i, n := range names {
			c, w := median(cpu[i]), median(wall[i])
			fmt.Fprintf(&b, "\n  %-9s cpu %6.2f ms (%5.0f MB/s, x%.2f)   wall %6.2f ms (%5.0f MB/s, x%.2f)", n, c/1e6, bytes/c*1e3, cw/c, w/1e6, bytes/w*1e3, ww/w)
		}
		t.Log(b.String())
	}
}
