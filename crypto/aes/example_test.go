package aes_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/vfslab/vfslab/crypto/aes"
)

// The AES library: expand once, encrypt single blocks (FIPS-197 Appendix
// C.1).
func ExampleExpandKey() {
	key, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f")
	pt, _ := hex.DecodeString("00112233445566778899aabbccddeeff")
	var ctx aes.Ctx
	if err := aes.ExpandKey(&ctx, key); err != nil {
		panic(err)
	}
	defer ctx.Wipe()
	ct := make([]byte, aes.BlockSize)
	ctx.Encrypt(ct, pt)
	fmt.Printf("%x\n", ct)
	// Output: 69c4e0d86a7b0430d8cdb78070b4c55a
}

// An xts(aes) tfm as fscrypt uses it for file contents: one SetKey, then
// in-place requests with IV = le64(data unit index) (IEEE 1619 vector 2).
func ExampleXTS() {
	key, _ := hex.DecodeString("11111111111111111111111111111111" + "22222222222222222222222222222222")
	var x aes.XTS
	if err := x.SetKey(key); err != nil {
		panic(err)
	}
	var iv [16]byte
	binary.LittleEndian.PutUint64(iv[:], 0x3333333333)
	buf := bytes.Repeat([]byte{0x44}, 32)
	if err := x.Encrypt(buf, buf, &iv); err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", buf)
	// Output: c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0
}

// cts(cbc(aes)) as fscrypt uses it for filenames (RFC 3962, 17 bytes).
func ExampleCTSCBC() {
	var c aes.CTSCBC
	if err := c.SetKey([]byte("chicken teriyaki")); err != nil {
		panic(err)
	}
	var iv [16]byte
	name := []byte("I would like the ")
	if err := c.Encrypt(name, name, &iv); err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", name)
	// Output: c6353568f2bf8cb4d8a580362da7ff7f97
}
