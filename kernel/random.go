package kernel

import (
	"math/rand/v2"
	"sync"
)

// random is the machine's random number generator, the model of
// drivers/char/random.c's base_crng: every random choice the simulated
// kernel makes (file nonces, failslab's probability draws) comes from it,
// so a machine seeded with one value makes the same choices every run. It
// is a ChaCha8 stream (the kernel's crng is ChaCha20) keyed from the seed;
// it is deterministic by design and not a source of secrets. Tasks share
// it under a mutex; concurrent tasks draw in the order they reach it.
type random struct {
	mu   sync.Mutex
	rng  *rand.ChaCha8
	seed uint64
}

// seedKey expands a 64-bit seed into the ChaCha8 key.
func seedKey(seed uint64) [32]byte {
	var k [32]byte
	s := rand.NewPCG(seed, 0x72616e646f6d) // "random"
	for i := 0; i < 32; i += 8 {
		v := s.Uint64()
		for j := 0; j < 8; j++ {
			k[i+j] = byte(v >> (8 * j))
		}
	}
	return k
}

func (r *random) reseed(seed uint64) {
	r.mu.Lock()
	r.rng = rand.NewChaCha8(seedKey(seed))
	r.seed = seed
	r.mu.Unlock()
}

// Seed reseeds the machine's random number generator and its failslab
// draws: afterwards the machine makes the choices seed determines. A new
// machine is seeded with 0.
func (k *Kernel) Seed(seed uint64) {
	k.random.reseed(seed)
	k.Failslab.Seed(seed)
}

// GetRandomBytes fills buf from the machine's generator (get_random_bytes,
// drivers/char/random.c).
func (k *Kernel) GetRandomBytes(buf []byte) {
	r := &k.random
	r.mu.Lock()
	if r.rng == nil {
		r.rng = rand.NewChaCha8(seedKey(0))
	}
	r.rng.Read(buf)
	r.mu.Unlock()
}

// GetRandomU32 is get_random_u32.
func (k *Kernel) GetRandomU32() uint32 {
	var b [4]byte
	k.GetRandomBytes(b[:])
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// GetRandomU32Below is get_random_u32_below: uniform in [0, ceil), ceil > 0.
func (k *Kernel) GetRandomU32Below(ceil uint32) uint32 {
	if ceil == 0 {
		BUG("get_random_u32_below(0)")
	}
	// Lemire's multiply-and-reject, as the kernel's implementation does.
	for {
		x := uint64(k.GetRandomU32()) * uint64(ceil)
		if uint32(x) >= -ceil%ceil {
			return uint32(x >> 32)
		}
	}
}
