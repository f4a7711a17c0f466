package sim

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/fscrypt"
	"github.com/vfslab/vfslab/fscrypt/bare"
	"github.com/vfslab/vfslab/kernel"
)

// The fscrypt-level workloads run on the in-memory fscrypt test filesystem
// (fscrypt/fstest): what they measure is fs/crypto and the Crypto API, with
// no directory code around it.

var (
	_ = Register(&Workload{
		Name:    "fname",
		Summary: "encrypt then decrypt one filename (lengths 1..255 in turn) in a v2 AES-256-CTS directory",
		Patch:   fscrypt.FnameOnstackPatch,
		Params: []Param{
			{Name: "engine", Default: "none", Help: "none, or async: register the modelled hardware engine above the software drivers", Range: OneOf("none", "async")},
			{Name: "len", Default: "1-255", Help: "name length, or 1-255 for every length in turn", Range: Range{Words: []string{"1-255"}, Min: 1, Max: 255}},
		},
		Setup: setupFname,
	})
	_ = Register(&Workload{
		Name:    "v1kdf",
		Summary: "derive one v1 per-file key (AES-128-ECB of the master key under the file nonce)",
		Patch:   fscrypt.V1KDFPatch,
		Params:  []Param{{Name: "keysize", Default: "64", Help: "derived key size: 16, 32 or 64 bytes", Range: OneOf("16", "32", "64")}},
		Setup:   setupV1KDF,
		Headlines: []*Headline{{
			Patch:  fscrypt.V1KDFPatch,
			Metric: MetricOps,
			// The seed's "~7000 cycles before" is the code the patch
			// replaced: the 6.17 sync_skcipher derivation.
			Base:       "sync",
			SeedRatios: map[string]float64{"aeslib": 7000.0 / 1500},
			Seed:       "Ryzen 9 9950X: ~7000 -> ~1500 cycles per derived key, before = the 6.17 sync code the patch replaced (HKDF-SHA512 ~3500)",
			// FPU sections (kernel_fpu_begin) per key derivation.
			Events:    []string{"kernel_fpu_begin"},
			Size:      Size{Ops: 30000, Count: 5},
			DebugSize: Size{Ops: 3000, Count: 5},
		}},
	})
)

// fscryptFS is an fstest superblock with a v2 master key added.
func fscryptFS(t *kernel.Task, api *crypto.API) (*bare.SB, [16]byte, error) {
	sb := bare.NewSB(api)
	id, _, err := bare.AddKey(t, sb, 2, bare.PlaintextStream("vfslab sim master key", 64))
	if err != nil {
		return nil, id, fmt.Errorf("add key: %w", err)
	}
	return sb, id, nil
}

// encryptedInode makes an inode of sb with policy p, a nonce counting up
// from nonce, and its key set up.
func encryptedInode(t *kernel.Task, sb *bare.SB, p fscrypt.Policy, nonce byte, ino uint64, mode uint32) (*bare.Inode, error) {
	n := make([]byte, fscrypt.FileNonceSize)
	for j := range n {
		n[j] = nonce + byte(j)
	}
	return sb.NewEncryptedInode(t, p, n, ino, mode, 12)
}

// v2Policy is the policy of Android and most users: AES-256-XTS contents,
// AES-256-CTS filenames, 32-byte padding.
func v2Policy(id [16]byte) fscrypt.Policy {
	return fscrypt.Policy{Version: fscrypt.PolicyV2, ContentsMode: 1, FilenamesMode: 4, Flags: 3, Identifier: id}
}

type fnameInst struct {
	env    *Env
	engine *crypto.Engine
	sb     *bare.SB
	dir    *bare.Inode
	names  [][]byte
}

func setupFname(env *Env) (Instance, error) {
	in := &fnameInst{env: env}
	lens := env.Param("len")
	if lens == "1-255" {
		for n := 1; n <= 255; n++ {
			in.names = append(in.names, bytes.Repeat([]byte{'a' + byte(n%26)}, n))
		}
	} else {
		n, err := strconv.Atoi(lens)
		if err != nil || n < 1 || n > 255 {
			return nil, fmt.Errorf("fname: bad len %q: want 1..255 or 1-255", lens)
		}
		in.names = [][]byte{bytes.Repeat([]byte{'n'}, n)}
	}
	t := env.K.NewTask("fname-setup")
	defer t.Exit()
	api := crypto.NewAPI()
	switch env.Param("engine") {
	case "none":
	case "async":
		e, err := api.RegisterEngine(t, crypto.EngineConfig{Name: "sim"})
		if err != nil {
			return nil, err
		}
		in.engine = e
	default:
		return nil, fmt.Errorf("fname: bad engine %q: want none or async", env.Param("engine"))
	}
	sb, id, err := fscryptFS(t, api)
	if err != nil {
		in.Close()
		return nil, err
	}
	in.sb = sb
	if in.dir, err = encryptedInode(t, sb, v2Policy(id), 1, 2, fscrypt.SIFDIR|0o755); err != nil {
		in.Close()
		return nil, err
	}
	return in, nil
}

func (in *fnameInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	cts := make([][]byte, len(in.names))
	for i, n := range in.names {
		size, _ := fscrypt.FnameEncryptedSize(in.dir, len(n), 255)
		cts[i] = make([]byte, size)
	}
	buf, err := fscrypt.FnameAllocBuffer(t, 255)
	if err != nil {
		return nil, err
	}
	return func(i int) (err error) {
		defer t.Recover(&err)
		j := i % len(in.names)
		if err := fscrypt.FnameEncrypt(t, in.dir, in.names[j], cts[j]); err != nil {
			return err
		}
		n, err := fscrypt.FnameDiskToUsr(t, in.dir, 0, 0, cts[j], buf)
		if err != nil {
			return err
		}
		if !bytes.Equal(buf[:n], in.names[j]) {
			return fmt.Errorf("fname: round trip of a %d-byte name gave %q", len(in.names[j]), buf[:n])
		}
		return nil
	}, nil
}

func (in *fnameInst) Close() error {
	if in.engine != nil {
		in.engine.Stop()
	}
	return nil
}

type v1kdfInst struct {
	sb   *bare.SB
	size int
}

func setupV1KDF(env *Env) (Instance, error) {
	size, err := strconv.Atoi(env.Param("keysize"))
	if err != nil || (size != 16 && size != 32 && size != 64) {
		return nil, fmt.Errorf("v1kdf: bad keysize %q: want 16, 32 or 64", env.Param("keysize"))
	}
	return &v1kdfInst{sb: bare.NewSB(crypto.NewAPI()), size: size}, nil
}

func (in *v1kdfInst) Worker(w int, t *kernel.Task) (func(int) error, error) {
	master := bare.PlaintextStream("vfslab v1 master", 64)
	out := make([]byte, in.size)
	var nonce [fscrypt.FileNonceSize]byte
	nonce[15] = byte(w)
	return func(i int) (err error) {
		defer t.Recover(&err)
		nonce[0], nonce[1] = byte(i), byte(i>>8)
		return fscrypt.DeriveV1Key(t, in.sb, master, nonce, out)
	}, nil
}

func (in *v1kdfInst) Close() error { return nil }
