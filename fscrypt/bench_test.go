package fscrypt_test

import (
	"bytes"
	"flag"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/kmem"
	"github.com/vfslab/vfslab/patch"
)

// BenchmarkV1KDF measures one v1 per-file key derivation
// (setup_v1_file_key_derived's derive step) per fscrypt-v1-kdf variant, for
// the key sizes the modes use, beside the v2 HKDF-SHA512 derivation of a
// per-file key. Seed 002 reports ~7000 (base) and ~1500 (aeslib) cycles
// per key, HKDF ~3500.
func BenchmarkV1KDF(b *testing.B) {
	master := bare.PlaintextStream("bench master", 64)
	nonce := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	for _, variant := range fscrypt.V1KDFPatch.VariantNames() {
		for _, size := range []int{32, 64} {
			b.Run(fmt.Sprintf("%s/keysize=%d", variant, size), func(b *testing.B) {
				task := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(fscrypt.V1KDFPatch, variant)}).NewTask("bench")
				defer task.Exit()
				sb := bare.NewSB(newAPI())
				out := make([]byte, size)
				if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					nonce[0] = byte(i)
					if err := fscrypt.DeriveV1Key(task, sb, master, nonce, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	for _, size := range []int{32, 64} {
		b.Run(fmt.Sprintf("v2-hkdf-sha512/keysize=%d", size), func(b *testing.B) {
			task := kernel.New().NewTask("bench")
			defer task.Exit()
			sb := newSB(b)
			id, _ := addKey(b, task, sb, 2, master)
			mk := fscrypt.FindMasterKeyForTest(sb.Keys, fscrypt.IdentifierSpec(id))
			out := make([]byte, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				nonce[0] = byte(i)
				fscrypt.HKDFExpandForTest(mk, fscrypt.HKDFContextPerFileEncKey, nonce[:], out)
			}
		})
	}
}

// benchNames are names of every length 1..255.
var benchNames = func() [][]byte {
	out := make([][]byte, 255)
	for i := range out {
		out[i] = bytes.Repeat([]byte{'a' + byte(i%26)}, i+1)
	}
	return out
}()

// BenchmarkFname measures fscrypt_fname_encrypt and fname_decrypt (through
// fscrypt_fname_disk_to_usr) per fscrypt-fname-onstack variant, for names
// of 16 and 255 bytes and for all lengths 1..255 in turn. req-kmallocs/op is
// the number of skcipher requests kmalloc'd per operation (0 for the
// on-stack variants).
func BenchmarkFname(b *testing.B) {
	for _, op := range []string{"encrypt", "decrypt"} {
		for _, variant := range fscrypt.FnameOnstackPatch.VariantNames() {
			for _, lens := range []string{"16", "255", "1-255"} {
				b.Run(fmt.Sprintf("%s/%s/len=%s", op, variant, lens), func(b *testing.B) {
					task := kernel.NewWith(kernel.Config{Patches: patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, variant)}).NewTask("bench")
					task.Stats = new(kmem.Stats)
					defer task.Exit()
					dir := setupDir(b, task,
						fscrypt.Policy{Version: 2, ContentsMode: 1, FilenamesMode: 4, Flags: 3},
						bare.PlaintextStream("fname bench", 64), make([]byte, 16), 2)
					names := benchNames
					switch lens {
					case "16":
						names = benchNames[15:16]
					case "255":
						names = benchNames[254:255]
					}
					cts := make([][]byte, len(names))
					for i, n := range names {
						size, _ := fscrypt.FnameEncryptedSize(dir, len(n), 255)
						cts[i] = make([]byte, size)
						if err := fscrypt.FnameEncrypt(task, dir, n, cts[i]); err != nil {
							b.Fatal(err)
						}
					}
					buf, _ := fscrypt.FnameAllocBuffer(task, 255)
					site, _ := kmem.LookupSite("fscrypt_fname_encrypt:skcipher_request")
					if op != "encrypt" {
						site, _ = kmem.LookupSite("fname_decrypt:skcipher_request")
					}
					before := task.Stats.Site(site).Allocs
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						j := i % len(names)
						var err error
						if op == "encrypt" {
							err = fscrypt.FnameEncrypt(task, dir, names[j], cts[j])
						} else {
							_, err = fscrypt.FnameDiskToUsr(task, dir, 0, 0, cts[j], buf)
						}
						if err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(task.Stats.Site(site).Allocs-before)/float64(b.N), "req-kmallocs/op")
				})
			}
		}
	}
}

var readMiB = flag.Int("fscrypt.readmib", 256, "size in MiB of the encrypted file BenchmarkReadPath reads")

// readBenchFile is the benchmark's encrypted file, made once, and the
// same file on two filesystems: one whose key uses the pre-6.17 tfm and
// allocated requests per data unit (fscrypt-fname-onstack=base), one with
// Linux 6.17's sync tfm and on-stack requests (upstream).
var readBenchFile struct {
	once  sync.Once
	sbs   [2]*bare.SB
	files [2]*bare.Inode
	ct    []byte
	err   error
}

// BenchmarkReadPath reads an encrypted file of -fscrypt.readmib MiB
// (default 256; go test -bench ReadPath ./fscrypt -args -fscrypt.readmib=N)
// through each crypto-bio variant: 256 KiB bios of 4 KiB folios completed
// by one block-device goroutine, the decrypt workqueue with max_active =
// GOMAXPROCS. MB/s is the read throughput. The per-data-unit requests of
// workqueue/inline/chain are allocated (req=alloc: the kernel seed 003 was
// written against) or on-stack (req=onstack: Linux 6.17). Seed 003 reports
// 8 GB in workqueue 2.4 s, inline 2.5 s, chain ~2.4 s, bio 2.1 s.
//
// kmallocs/op is the modelled kmallocs of one read (from a separate,
// counting read path): one request per data unit with req=alloc in
// workqueue, inline and chain (chain: plus one IV array per bio), none
// on-stack or in bio. allocs/op equals it once the first read has filled
// the path's folio and bio pools (the page cache and the bio mempool,
// which the model does not count as kmallocs); with -benchtime=1x that
// warm-up, about 2 Go allocations per folio of the readahead window, is
// all of it.
func BenchmarkReadPath(b *testing.B) {
	size := *readMiB << 20
	f := &readBenchFile
	f.once.Do(func() {
		master := bare.PlaintextStream("read bench", 64)
		var task *kernel.Task
		for i, v := range []string{"base", "upstream"} {
			// The key's tfm is allocated as the machine's
			// fscrypt-fname-onstack variant says.
			task = kernel.NewWith(kernel.Config{Patches: readBenchSet(i, v)}).NewTask("mkfile")
			defer task.Exit()
			f.sbs[i] = bare.NewSB(newAPI())
			id, _ := addKey(b, task, f.sbs[i], 2, master)
			f.files[i] = encryptedInode(b, task, f.sbs[i], fscrypt.Policy{Version: 2, ContentsMode: 1, FilenamesMode: 4, Identifier: id},
				make([]byte, 16), 12, fscrypt.SIFREG|0o644, 12)
		}
		f.ct = make([]byte, size)
		folio := block.NewFolio(0, 0)
		folio.Host = fscrypt.Inode(f.files[1])
		for off := 0; off < size; off += block.PageSize {
			folio.Index = uint64(off / block.PageSize)
			benchPage(folio.Data, folio.Index)
			bounce, err := fscrypt.EncryptPagecacheBlocks(task, folio, block.PageSize, 0)
			if err != nil {
				f.err = err
				return
			}
			copy(f.ct[off:], bounce)
			fscrypt.FreeBouncePage(task, bounce)
		}
	})
	if f.err != nil {
		b.Fatal(f.err)
	}
	dst := make([]byte, size)
	for i, req := range []string{"alloc", "onstack"} {
		for _, variant := range fscrypt.CryptoBioPatch.VariantNames() {
			b.Run(fmt.Sprintf("%s/req=%s/%dMiB/workers=%d", variant, req, *readMiB, runtime.GOMAXPROCS(0)), func(b *testing.B) {
				k := kernel.NewWith(kernel.Config{Patches: readBenchSet(i, "").MustWith(fscrypt.CryptoBioPatch, variant)})
				task := k.NewTask("reader")
				defer task.Exit()
				file := f.files[i]
				rp, err := fscrypt.NewReadPath(k, file, 0, f.ct, fscrypt.ReadPathOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer rp.Close()
				clear(dst[:block.PageSize])
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := rp.Read(task, dst, 0); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				b.ReportMetric(readKmallocs(b, k, file, f.ct, size), "kmallocs/op")
				want := make([]byte, block.PageSize)
				for _, idx := range []uint64{0, uint64(size/block.PageSize) - 1} {
					benchPage(want, idx)
					if !bytes.Equal(dst[idx*block.PageSize:(idx+1)*block.PageSize], want) {
						b.Fatalf("page %d decrypted wrong", idx)
					}
				}
			})
		}
	}
}

// readKmallocs is the modelled kmallocs of one read of size bytes of file
// on k's variant set: a separate read path whose tasks count (so that
// counting never perturbs the timed reads), the reader's and the
// device's and workqueue's allocations summed.
func readKmallocs(b *testing.B, k *kernel.Kernel, file *bare.Inode, ct []byte, size int) float64 {
	ck := kernel.NewWith(kernel.Config{Patches: *k.Patches()})
	task := ck.NewTask("counting reader")
	task.EnableCounting()
	defer task.Exit()
	rp, err := fscrypt.NewReadPath(ck, file, 0, ct, fscrypt.ReadPathOptions{Count: true})
	if err != nil {
		b.Fatal(err)
	}
	dst := make([]byte, size)
	if err := rp.Read(task, dst, 0); err != nil {
		b.Fatal(err)
	}
	rp.Close()
	n := task.Stats.Totals().Allocs
	for _, w := range rp.Tasks() {
		n += w.Stats.Totals().Allocs
	}
	return float64(n)
}

// benchPage fills a page with a pattern that depends on its index.
func benchPage(p []byte, index uint64) {
	for i := range p {
		p[i] = byte(uint64(i)*131 + index*7 + uint64(i>>8))
	}
}

// readBenchSet is the patch set of BenchmarkReadPath's file i: its
// fscrypt-fname-onstack variant (base for req=alloc, upstream for
// req=onstack), named v or, when v is "", by i.
func readBenchSet(i int, v string) patch.Set {
	if v == "" {
		v = []string{"base", "upstream"}[i]
	}
	return patch.Set{}.MustWith(fscrypt.FnameOnstackPatch, v)
}
