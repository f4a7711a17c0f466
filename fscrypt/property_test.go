package fscrypt_test

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"pgregory.net/rapid"

	"github.com/vfslab/vfslab/block"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
)

// validPolicy draws a policy the kernel accepts on a directory of a
// filesystem with stable 32-bit inodes and 2^44-byte files.
func validPolicy(t *rapid.T) fscrypt.Policy {
	v2 := rapid.Bool().Draw(t, "v2")
	pairs := [][2]uint8{{1, 4}, {5, 6}, {9, 9}}
	if v2 {
		pairs = append(pairs, [2]uint8{1, 10})
	}
	pair := rapid.SampledFrom(pairs).Draw(t, "modes")
	p := fscrypt.Policy{ContentsMode: pair[0], FilenamesMode: pair[1], Flags: uint8(rapid.IntRange(0, 3).Draw(t, "pad"))}
	if v2 {
		p.Version = fscrypt.PolicyV2
	}
	methods := []uint8{0}
	if pair[0] == 9 {
		methods = append(methods, fscrypt.PolicyFlagDirectKey)
	}
	if v2 && pair[0] == 1 {
		methods = append(methods, fscrypt.PolicyFlagIVInoLblk64, fscrypt.PolicyFlagIVInoLblk32)
	}
	p.Flags |= rapid.SampledFrom(methods).Draw(t, "method")
	return p
}

// nameGen draws a filename: 1..255 bytes, anything but NUL and '/'.
var nameGen = rapid.Custom(func(t *rapid.T) []byte {
	n := rapid.IntRange(1, 255).Draw(t, "len")
	b := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "bytes")
	for i := range b {
		if b[i] == 0 || b[i] == '/' {
			b[i] = 0xff
		}
	}
	return b
})

// setupDir makes a superblock and a directory under p whose key is set up
// with master key and nonce, by task (whose kernel's variants run).
func setupDir(tb testing.TB, task *kernel.Task, p fscrypt.Policy, master, nonce []byte, ino uint64) *bare.Inode {
	sb := bare.NewSB(newAPI())
	sb.FSUUID = [16]byte{0xfe, 0xed}
	p.Identifier, p.Descriptor = addKey(tb, task, sb, map[bool]int{true: 2, false: 1}[p.Version == fscrypt.PolicyV2], master)
	return encryptedInode(tb, task, sb, p, nonce, ino, fscrypt.SIFDIR|0o755, 12)
}

// TestPropertyFilenames: for any valid policy, key, nonce and name, the
// three fscrypt-fname-onstack variants give the same ciphertext, of the
// padded length, and each decrypts it back; the name never round-trips to
// something else, and the no-key name matches the entry.
func TestPropertyFilenames(t *testing.T) {
	tasks := variantTasks(t, fscrypt.FnameOnstackPatch)
	rapid.Check(t, func(rt *rapid.T) {
		p := validPolicy(rt)
		master := rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(rt, "master")
		nonce := rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "nonce")
		ino := rapid.Uint64Range(1, 1<<32-1).Draw(rt, "ino")
		name := nameGen.Draw(rt, "name")
		var first []byte
		for _, variant := range fscrypt.FnameOnstackPatch.VariantNames() {
			task := tasks[variant]
			dir := setupDir(t, task, p, master, nonce, ino)
			var fname fscrypt.Name
			if err := fscrypt.SetupFilename(task, dir, name, false, &fname); err != nil {
				rt.Fatalf("%s: setup: %v", variant, err)
			}
			ct := bytes.Clone(fname.DiskName)
			fscrypt.FreeFilename(task, &fname)
			if string(name) == "." || string(name) == ".." {
				// fscrypt_setup_filename leaves "." and ".." as they are
				// (fscrypt_is_dot_dotdot).
				if !bytes.Equal(ct, name) {
					rt.Fatalf("%s: %q set up as %x", variant, name, ct)
				}
				continue
			}
			pad := p.PaddingBytes()
			if want := min((max(len(name), 16)+pad-1)/pad*pad, 255); len(ct) != want {
				rt.Fatalf("%s: %d-byte name encrypted to %d bytes, want %d", variant, len(name), len(ct), want)
			}
			if first == nil {
				first = ct
			} else if !bytes.Equal(first, ct) {
				rt.Fatalf("%s: %x differs from base's %x", variant, ct, first)
			}
			buf, _ := fscrypt.FnameAllocBuffer(task, len(ct))
			n, err := fscrypt.FnameDiskToUsr(task, dir, 0, 0, ct, buf)
			if err != nil || !bytes.Equal(buf[:n], name) {
				rt.Fatalf("%s: decrypt: %q, %v", variant, buf[:n], err)
			}
			fscrypt.FnameFreeBuffer(task, buf)
			// A lookup with the plaintext matches the entry.
			if err := fscrypt.SetupFilename(task, dir, name, true, &fname); err != nil || !fscrypt.MatchName(&fname, ct) {
				rt.Fatalf("%s: lookup does not match: %v", variant, err)
			}
			fscrypt.FreeFilename(task, &fname)
		}
	})
}

// TestPropertyNokeyNames: encode/decode round trips, and a lookup of the
// no-key name in a directory without the key matches exactly its entry.
func TestPropertyNokeyNames(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	dir := sb.NewInode(2, fscrypt.SIFDIR|0o755)
	c := fscrypt.Context{Policy: v2Policy([16]byte{1}, 0)}
	dir.SetRawContext(c.Marshal()) // the key was never added
	rapid.Check(t, func(rt *rapid.T) {
		ct := rapid.SliceOfN(rapid.Byte(), 16, 255).Draw(rt, "ciphertext")
		hash := rapid.Uint32().Draw(rt, "hash")
		minor := rapid.Uint32().Draw(rt, "minor")
		buf, _ := fscrypt.FnameAllocBuffer(task, 255)
		defer fscrypt.FnameFreeBuffer(task, buf)
		n, err := fscrypt.FnameDiskToUsr(task, dir, hash, minor, ct, buf)
		if err != nil {
			rt.Fatal(err)
		}
		name := bytes.Clone(buf[:n])
		if len(name) > fscrypt.NokeyNameMaxEncoded || bytes.ContainsAny(name, "/\x00=") {
			rt.Fatalf("bad no-key name %q", name)
		}
		nk, err := fscrypt.DecodeNokeyName(name)
		if err != nil || nk.Hash != hash || nk.MinorHash != minor {
			rt.Fatalf("decode: %v %v", nk.String(), err)
		}
		if nk.Digested != (len(ct) > fscrypt.NokeyNameBytes) {
			rt.Fatalf("digested %t for %d bytes", nk.Digested, len(ct))
		}
		if nk.Digested {
			if !bytes.Equal(nk.Bytes, ct[:fscrypt.NokeyNameBytes]) || nk.SHA256 != sha256.Sum256(ct[fscrypt.NokeyNameBytes:]) {
				rt.Fatal("digested fields")
			}
		} else if !bytes.Equal(nk.Bytes, ct) {
			rt.Fatal("bytes")
		}
		var fname fscrypt.Name
		if err := fscrypt.SetupFilename(task, dir, name, true, &fname); err != nil {
			rt.Fatalf("lookup: %v", err)
		}
		defer fscrypt.FreeFilename(task, &fname)
		if !fname.IsNokeyName || fname.Hash != hash || fname.MinorHash != minor {
			rt.Fatalf("fscrypt_name %+v", fname)
		}
		if !fscrypt.MatchName(&fname, ct) {
			rt.Fatal("no-key name does not match its entry")
		}
		other := bytes.Clone(ct)
		i := rapid.IntRange(0, len(other)-1).Draw(rt, "flip")
		other[i] ^= 1 << rapid.IntRange(0, 7).Draw(rt, "bit")
		if fscrypt.MatchName(&fname, other) {
			rt.Fatalf("matches a different entry (byte %d)", i)
		}
		if fscrypt.MatchName(&fname, append(bytes.Clone(ct), 'x')) {
			rt.Fatal("matches a longer entry")
		}
		// Creating with a no-key name is refused.
		var f2 fscrypt.Name
		if err := fscrypt.SetupFilename(task, dir, name, false, &f2); err != errno.ENOKEY {
			rt.Fatalf("create without key: %v", err)
		}
	})
}

// TestNokeyRejections lists the kernel's rejection rules.
func TestNokeyRejections(t *testing.T) {
	enc := func(n int) []byte {
		return fscrypt.EncodeNokeyName(nil, 1, 2, bytes.Repeat([]byte{7}, n))
	}
	long := enc(200) // 252 characters
	if len(long) != 252 {
		t.Fatalf("long no-key name is %d characters", len(long))
	}
	for _, tc := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"empty", nil, false},
		{"8 bytes decoded", []byte("AQAAAAIAAAA"), false},
		{"9 bytes decoded", []byte("AQAAAAIAAAAH"), true},
		{"157 bytes decoded", enc(149), true},
		{"158 bytes decoded", fscrypt.EncodeNokeyName(nil, 0, 0, make([]byte, 150))[:211], false},
		{"189 bytes decoded", long, true},
		{"253 characters", append(bytes.Clone(long), 'A'), false},
		{"'/'", []byte("AQAAAAIAAAA/"), false},
		{"'+'", []byte("AQAAAAIAAAA+"), false},
		{"'='", []byte("AQAAAAIAAAAH="), false},
		{"NUL", []byte("AQAAAAIAAAAH\x00"), false},
		{"leftover bits", []byte("AQAAAAIAAAAHB"), false},
		{"zero leftover bits", []byte("AQAAAAIAAAAHA"), true},
	} {
		_, err := fscrypt.DecodeNokeyName(tc.in)
		if (err == nil) != tc.ok || (err != nil && err != errno.ENOENT) {
			t.Errorf("%s: %v, want ok=%t", tc.name, err, tc.ok)
		}
	}
}

// TestPropertyV1KDFVariants: the three fscrypt-v1-kdf variants derive the
// same key for every key size the modes use and any master key and nonce.
func TestPropertyV1KDFVariants(t *testing.T) {
	tasks := variantTasks(t, fscrypt.V1KDFPatch)
	sb := bare.NewSB(newAPI())
	rapid.Check(t, func(rt *rapid.T) {
		size := rapid.SampledFrom([]int{16, 32, 64}).Draw(rt, "keysize")
		master := rapid.SliceOfN(rapid.Byte(), size, 64).Draw(rt, "master")
		var nonce [16]byte
		copy(nonce[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "nonce"))
		var first []byte
		for _, v := range fscrypt.V1KDFPatch.VariantNames() {
			out := make([]byte, size)
			if err := fscrypt.DeriveV1Key(tasks[v], sb, master, nonce, out); err != nil {
				rt.Fatalf("%s: %v", v, err)
			}
			if first == nil {
				first = out
			} else if !bytes.Equal(out, first) {
				rt.Fatalf("%s: %x, base %x", v, out, first)
			}
		}
	})
}

// TestPropertyContents: contents round-trip through the write and read
// paths for any policy, data unit size and position.
func TestPropertyContents(t *testing.T) {
	task := newTask(t)
	rapid.Check(t, func(rt *rapid.T) {
		p := validPolicy(rt)
		sb := newSB(t)
		sb.MaxBytesLimit = 1 << 40
		// A random master key: with a repetitive one the v1 derived XTS
		// key would have two equal halves, which setkey rejects
		// (CRYPTO_TFM_REQ_FORBID_WEAK_KEYS), as the kernel does.
		master := rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(rt, "master")
		p.Identifier, p.Descriptor = addKey(t, task, sb, map[bool]int{true: 2, false: 1}[p.Version == 2], master)
		if p.Version == 2 && p.Flags&fscrypt.PolicyFlagIVInoLblk32 == 0 {
			p.Log2DataUnitSize = uint8(rapid.SampledFrom([]int{0, 9, 10, 11, 12}).Draw(rt, "du"))
		}
		file := encryptedInode(t, task, sb, p, rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(rt, "nonce"), 7, fscrypt.SIFREG|0o644, 12)
		index := rapid.Uint64Range(0, 1<<28).Draw(rt, "page")
		pt := rapid.SliceOfN(rapid.Byte(), block.PageSize, block.PageSize).Draw(rt, "data")
		f := block.NewFolio(index, 0)
		f.Host = fscrypt.Inode(file)
		copy(f.Data, pt)
		ct, err := fscrypt.EncryptPagecacheBlocks(task, f, block.PageSize, 0)
		if err != nil {
			rt.Fatal(err)
		}
		if bytes.Equal(ct, pt) {
			rt.Fatal("ciphertext equals plaintext")
		}
		copy(f.Data, ct)
		fscrypt.FreeBouncePage(task, ct)
		if err := fscrypt.DecryptPagecacheBlocks(task, f, block.PageSize, 0); err != nil || !bytes.Equal(f.Data, pt) {
			rt.Fatalf("round trip: %v", err)
		}
	})
}

// TestPropertySymlinks: encrypted symlink targets round-trip, and their
// on-disk form is le16 length || the target encrypted as a filename || NUL.
func TestPropertySymlinks(t *testing.T) {
	task := newTask(t)
	rapid.Check(t, func(rt *rapid.T) {
		p := validPolicy(rt)
		master := rapid.SliceOfN(rapid.Byte(), 64, 64).Draw(rt, "master")
		dir := setupDir(t, task, p, master, bytes.Repeat([]byte{5}, 16), 2)
		target := nameGen.Draw(rt, "target")
		diskLen, encrypted, err := fscrypt.PrepareSymlink(task, dir, target, 4096)
		if err != nil || !encrypted {
			rt.Fatalf("prepare: %v", err)
		}
		link := dir.SuperBlock().(*bare.SB).NewInode(0, fscrypt.SIFLNK|0o777)
		if enc, err := fscrypt.PrepareNewInode(task, dir, link); err != nil || !enc {
			rt.Fatalf("new inode: %v", err)
		}
		if err := fscrypt.SetContext(task, link, nil); err != nil {
			rt.Fatal(err)
		}
		sd, err := fscrypt.EncryptSymlink(task, link, target, diskLen)
		if err != nil {
			rt.Fatal(err)
		}
		ctLen := int(sd[0]) | int(sd[1])<<8
		if ctLen != diskLen-3 || sd[len(sd)-1] != 0 {
			rt.Fatalf("layout: len %d of %d", ctLen, diskLen)
		}
		// The ciphertext is the target encrypted as a name with the
		// symlink's own key.
		want := make([]byte, ctLen)
		if err := fscrypt.FnameEncrypt(task, link, target, want); err != nil || !bytes.Equal(want, sd[2:2+ctLen]) {
			rt.Fatalf("ciphertext differs from fname encryption: %v", err)
		}
		got, cacheable, err := fscrypt.GetSymlink(task, link, sd)
		if err != nil || !cacheable || !bytes.Equal(got, target) {
			rt.Fatalf("get: %q %t %v", got, cacheable, err)
		}
		fscrypt.FreeSymlinkData(task, sd)
	})
}

// TestMalformedInputNeverPanics feeds random bytes to every parser and to
// the operations that read on-disk data.
func TestMalformedInputNeverPanics(t *testing.T) {
	task := newTask(t)
	sb := newSB(t)
	id, _ := addKey(t, task, sb, 2, bytes.Repeat([]byte{1}, 64))
	withKey := encryptedInode(t, task, sb, v2Policy(id, 0), make([]byte, 16), 2, fscrypt.SIFDIR|0o755, 12)
	link := encryptedInode(t, task, sb, v2Policy(id, 0), make([]byte, 16), 3, fscrypt.SIFLNK|0o777, 12)
	rapid.Check(t, func(rt *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(rt, "bytes")
		var err error
		func() {
			defer task.Recover(&err)
			fscrypt.DecodeNokeyName(b)
			fscrypt.ParseContext(b)
			fscrypt.ParsePolicy(b)
			i := sb.NewInode(0, fscrypt.SIFDIR|0o755)
			i.SetRawContext(b)
			fscrypt.GetEncryptionInfo(task, i, rapid.Bool().Draw(rt, "allow"))
			fscrypt.IoctlGetNonce(task, i)
			fscrypt.IoctlGetPolicyEx(task, i, make([]byte, 40))
			fscrypt.PutEncryptionInfo(task, i)
			j := sb.NewInode(0, fscrypt.SIFDIR|0o755)
			fscrypt.IoctlSetPolicy(task, kernel.RootCred, j, b)
			buf, _ := fscrypt.FnameAllocBuffer(task, 255)
			if len(b) <= 255 {
				fscrypt.FnameDiskToUsr(task, withKey, 0, 0, b, buf)
				fscrypt.FnameDiskToUsr(task, i, 0, 0, b, buf)
			}
			fscrypt.FnameFreeBuffer(task, buf)
			var fname fscrypt.Name
			if fscrypt.SetupFilename(task, i, b, true, &fname) == nil {
				fscrypt.MatchName(&fname, b)
				fscrypt.FreeFilename(task, &fname)
			}
			fscrypt.GetSymlink(task, link, b)
		}()
		if err != nil {
			rt.Fatalf("input %x: %v", b, err)
		}
	})
}

// FuzzNokeyDecode: the no-key decoder never panics, and whatever it
// accepts re-encodes to a name that decodes to the same fields (the kernel
// accepts non-canonical encodings such as a trailing 'A' with zero leftover
// bits, so the re-encoding may be shorter).
func FuzzNokeyDecode(f *testing.F) {
	f.Add([]byte("AQAAAAIAAAAH"))
	f.Add(fscrypt.EncodeNokeyName(nil, 1, 2, bytes.Repeat([]byte{7}, 200)))
	f.Add([]byte("_-AZaz09"))
	f.Fuzz(func(t *testing.T, b []byte) {
		nk, err := fscrypt.DecodeNokeyName(b)
		if err != nil {
			if err != errno.ENOENT {
				t.Fatalf("error %v", err)
			}
			return
		}
		if !nk.Digested {
			got := fscrypt.EncodeNokeyName(nil, nk.Hash, nk.MinorHash, nk.Bytes)
			back, err := fscrypt.DecodeNokeyName(got)
			if err != nil || back.String() != nk.String() || len(got) > len(b) {
				t.Fatalf("%q decodes to %s, which encodes to %q: %s %v", b, nk.String(), got, back.String(), err)
			}
		}
	})
}

// FuzzContextParse: the context parser never panics, and what it accepts
// marshals back to the same bytes.
func FuzzContextParse(f *testing.F) {
	c := fscrypt.Context{Policy: v2Policy([16]byte{1, 2}, 0x13)}
	f.Add(c.Marshal())
	c1 := fscrypt.Context{Policy: fscrypt.Policy{Version: 0, ContentsMode: 1, FilenamesMode: 4}}
	f.Add(c1.Marshal())
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, b []byte) {
		ctx, err := fscrypt.ParseContext(b)
		if err != nil {
			if err != errno.EINVAL {
				t.Fatalf("error %v", err)
			}
			return
		}
		if got := ctx.Marshal(); !bytes.Equal(got, b) {
			t.Fatalf("%x parses to %s, which marshals to %x", b, ctx.String(), got)
		}
		_ = ctx.String()
	})
}
