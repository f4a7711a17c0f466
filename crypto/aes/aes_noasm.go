//go:build !amd64 || purego

package aes

// hasAESNI is false: this build uses the portable implementation only.
const hasAESNI = false

// The assembly entry points do not exist in this build; with hasAESNI
// constant false the compiler removes every call to them.

func expandKeyAsm(nr int, key *byte, enc *uint32, dec *uint32) { panic(noAsm) }

func encryptBlockAsm(nr int, xk *uint32, dst, src *byte) { panic(noAsm) }

func decryptBlockAsm(nr int, xk *uint32, dst, src *byte) { panic(noAsm) }

func ecbEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int) { panic(noAsm) }

func ecbDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int) { panic(noAsm) }

func cbcEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[BlockSize]byte) { panic(noAsm) }

func cbcDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, iv *[BlockSize]byte) { panic(noAsm) }

func xtsEncAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) { panic(noAsm) }

func xtsDecAsm(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) { panic(noAsm) }

// Nor do the wider XTS drivers.
const (
	hasAESNIAVX   = false
	hasVAESAVX2   = false
	hasVAESAVX512 = false
)

func xtsEncAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

func xtsDecAESNIAVX(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

func xtsEncVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

func xtsDecVAESAVX2(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

func xtsEncVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

func xtsDecVAESAVX512(nr int, xk *uint32, dst, src *byte, nblocks int, t *[BlockSize]byte) {
	panic(noAsm)
}

const noAsm = "aes: assembly called in a build without it"
