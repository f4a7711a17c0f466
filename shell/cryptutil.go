package shell

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dchest/siphash"
	"golang.org/x/crypto/hkdf"

	"github.com/vfslab/vfslab/crypto/adiantum"
	"github.com/vfslab/vfslab/crypto/hctr2"
)

// cmdFscryptCryptUtil is xfstests' src/fscrypt-crypt-util, the program
// _verify_ciphertext_for_encryption_policy checks the on-disk ciphertext
// with: it encrypts (or --decrypt's) standard input with CIPHER under
// MASTER_KEY (hex) or a key derived from it, data unit by data unit, and
// writes the result; --dump-key-identifier prints a master key's v2 key
// identifier. Its options, defaults, output and "[fscrypt-crypt-util]
// ERROR: " messages are the program's.
//
// It is written apart from the model's fscrypt on purpose, as the real
// program is apart from the kernel: the key derivation (AES-128-ECB for
// v1 policies, HKDF-SHA512 with fscrypt's info strings for v2, the
// DIRECT_KEY and IV_INO_LBLK_64/32 keys), the IVs (the data unit index,
// with the nonce for DIRECT_KEY, the inode number or its SipHash for
// IV_INO_LBLK) and the modes (XTS, CBC with ciphertext stealing, ESSIV)
// are computed here from Go's AES, SHA-2 and x/crypto's HKDF, so that a
// mistake in package fscrypt shows as a mismatch. Adiantum and HCTR2
// come from the model's crypto packages, which are pinned by their
// specifications' test vectors (Go has neither). Hardware-wrapped keys
// (--enable-hw-kdf, --use-inlinecrypt-key) are not modelled.
func cmdFscryptCryptUtil(c *cmd) int {
	u := cryptUtil{dataUnitSize: 4096}
	die := func(format string, args ...any) int {
		fmt.Fprintf(c.errw, "[fscrypt-crypt-util] ERROR: "+format+"\n", args...)
		return 1
	}
	var pos []string
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		if !strings.HasPrefix(a, "--") || a == "--" {
			if a == "--" {
				pos = append(pos, c.args[i+1:]...)
				break
			}
			if strings.HasPrefix(a, "-") && a != "-" {
				fmt.Fprintf(c.errw, "%s: invalid option -- '%s'\n", c.argv0, strings.TrimPrefix(a, "-"))
				cryptUtilUsage(c.errw)
				return 2
			}
			pos = append(pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		needVal := func() (string, bool) {
			if hasVal {
				return val, true
			}
			if i+1 < len(c.args) {
				i++
				return c.args[i], true
			}
			fmt.Fprintf(c.errw, "%s: option '--%s' requires an argument\n", c.argv0, name)
			cryptUtilUsage(c.errw)
			return "", false
		}
		switch name {
		case "help":
			cryptUtilUsage(c.out)
			return 0
		case "decrypt":
			u.decrypt = true
		case "direct-key":
			u.directKey = true
		case "dump-key-identifier":
			u.dumpKeyID = true
		case "iv-ino-lblk-64":
			u.lblk64 = true
		case "iv-ino-lblk-32":
			u.lblk32 = true
		case "enable-hw-kdf", "use-inlinecrypt-key":
			return die("--%s: hardware-wrapped keys are not modelled", name)
		case "data-unit-index", "data-unit-size", "file-nonce", "fs-uuid", "inode-number", "kdf", "mode-num", "padding", "block-size":
			v, ok := needVal()
			if !ok {
				return 2
			}
			if msg := u.setOption(name, v); msg != "" {
				return die("%s", msg)
			}
		default:
			fmt.Fprintf(c.errw, "%s: unrecognized option '%s'\n", c.argv0, a)
			cryptUtilUsage(c.errw)
			return 2
		}
	}
	if u.dumpKeyID {
		if len(pos) != 1 {
			cryptUtilUsage(c.errw)
			return 2
		}
		key, msg := parseMasterKey(pos[0])
		if msg != "" {
			return die("%s", msg)
		}
		u.masterKey = key
		id, err := u.keyIdentifier()
		if err != nil {
			return die("%v", err)
		}
		fmt.Fprintln(c.out, hex.EncodeToString(id))
		return 0
	}
	if len(pos) != 2 {
		cryptUtilUsage(c.errw)
		return 2
	}
	ciph, ok := fscryptCiphers[pos[0]]
	if !ok {
		return die("Unknown cipher: %s", pos[0])
	}
	key, msg := parseMasterKey(pos[1])
	if msg != "" {
		return die("%s", msg)
	}
	u.masterKey = key
	if u.dataUnitSize < ciph.minInput {
		return die("Data unit size of %d bytes is too small for cipher %s", u.dataUnitSize, pos[0])
	}
	realKey, iv, err := u.keyAndIV(ciph.keySize)
	if err != nil {
		return die("%v", err)
	}
	crypt, err := ciph.new(realKey)
	if err != nil {
		return die("%v", err)
	}
	in := bufio.NewReaderSize(c.in, u.dataUnitSize)
	buf := make([]byte, u.dataUnitSize)
	out := bufio.NewWriter(c.out)
	defer out.Flush()
	for {
		n, err := io.ReadFull(in, buf)
		if n == 0 {
			if err != nil && err != io.EOF {
				return die("reading from stdin: %v", err)
			}
			return 0
		}
		l := u.dataUnitSize
		if u.padding > 0 {
			l = min(roundUp(max(n, ciph.minInput), u.padding), u.dataUnitSize)
		}
		clear(buf[n:l])
		if err := crypt(buf[:l], iv.bytes[:], u.decrypt); err != nil {
			return die("%v", err)
		}
		if _, err := out.Write(buf[:l]); err != nil {
			return 1
		}
		iv.next(u.lblk64 || u.lblk32)
		if err != nil {
			return 0
		}
	}
}

func roundUp(n, to int) int { return (n + to - 1) / to * to }

// cryptUtilUsage prints the program's usage.
func cryptUtilUsage(w io.Writer) {
	io.WriteString(w, `Usage: fscrypt-crypt-util [OPTION]... [CIPHER | --dump-key-identifier] MASTER_KEY

Encrypts (or decrypts) standard input with CIPHER under MASTER_KEY (hex) or
a key derived from it, and writes the result to standard output.

CIPHER: AES-256-XTS, AES-256-CTS-CBC, AES-128-CBC-ESSIV, AES-128-CTS-CBC,
Adiantum or AES-256-HCTR2.

Options:
  --data-unit-index=DUIDX   first data unit index of the IVs (default 0)
  --data-unit-size=DUSIZE   encrypt each DUSIZE bytes apart (default 4096)
  --decrypt                 decrypt instead of encrypt
  --direct-key              IVs with the file nonce, one key for all files
  --dump-key-identifier     print the master key's key identifier only
  --file-nonce=NONCE        the file's nonce, 32 hex digits
  --fs-uuid=UUID            the filesystem UUID, 32 hex digits (for the
                            IV_INO_LBLK formats)
  --help                    this help
  --inode-number=INUM       the file's inode number (for the IV_INO_LBLK
                            formats)
  --iv-ino-lblk-32          like --iv-ino-lblk-64, with the 32-bit IVs
  --iv-ino-lblk-64          IVs with the inode number, one key per mode
  --kdf=KDF                 AES-128-ECB, HKDF-SHA512 or none (default none)
  --mode-num=NUM            the encryption mode number (for key derivation)
  --padding=PADDING         zero-pad a partial last data unit to a multiple
                            of PADDING bytes (default: to DUSIZE)
`)
}

// cryptUtil holds the program's options.
type cryptUtil struct {
	masterKey                 []byte
	kdf                       string
	modeNum                   int
	nonce, fsUUID             []byte
	directKey, lblk64, lblk32 bool
	dumpKeyID, decrypt        bool
	dataUnitIndex, inode      uint64
	dataUnitSize, padding     int
}

func (u *cryptUtil) setOption(name, v string) string {
	switch name {
	case "data-unit-index":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return "Invalid data unit index: " + v
		}
		u.dataUnitIndex = n
	case "data-unit-size", "block-size":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return "Invalid data unit size: " + v
		}
		u.dataUnitSize = n
	case "padding":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n&(n-1) != 0 {
			return "Invalid padding amount: " + v
		}
		u.padding = n
	case "inode-number":
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return "Invalid inode number: " + v
		}
		u.inode = n
	case "mode-num":
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 255 {
			return "Invalid mode number: " + v
		}
		u.modeNum = n
	case "kdf":
		switch v {
		case "none", "AES-128-ECB", "HKDF-SHA512":
			u.kdf = v
		default:
			return "Unknown KDF: " + v
		}
	case "file-nonce", "fs-uuid":
		b, err := hex.DecodeString(v)
		if err != nil || len(b) != 16 {
			if name == "file-nonce" {
				return "Invalid file nonce: " + v
			}
			return "Invalid filesystem UUID: " + v
		}
		if name == "file-nonce" {
			u.nonce = b
		} else {
			u.fsUUID = b
		}
	}
	return ""
}

// parseMasterKey reads MASTER_KEY: hex, at most 64 bytes.
func parseMasterKey(s string) ([]byte, string) {
	b, err := hex.DecodeString(s)
	if err != nil || len(s) == 0 {
		return nil, "Invalid master key: " + s
	}
	if len(b) > 64 {
		return nil, "Master key is too long"
	}
	return b, ""
}

// HKDF contexts: the byte after "fscrypt\0" in the info string of each
// key fscrypt derives from a v2 master key (fs/crypto/fscrypt_private.h).
const (
	hkdfCtxKeyIdentifier = 1
	hkdfCtxPerFileEncKey = 2
	hkdfCtxDirectKey     = 3
	hkdfCtxIVInoLblk64   = 4
	hkdfCtxIVInoLblk32   = 6
	hkdfCtxInodeHashKey  = 7
)

// hkdfExpand is fscrypt_hkdf_expand: HKDF-SHA512 with an empty salt over
// the master key, info "fscrypt\0" || context || data.
func (u *cryptUtil) hkdfExpand(context byte, data []byte, n int) ([]byte, error) {
	info := append([]byte("fscrypt\x00"), context)
	info = append(info, data...)
	out := make([]byte, n)
	if _, err := io.ReadFull(hkdf.New(sha512.New, u.masterKey, nil, info), out); err != nil {
		return nil, err
	}
	return out, nil
}

// keyIdentifier is a master key's v2 key identifier.
func (u *cryptUtil) keyIdentifier() ([]byte, error) {
	return u.hkdfExpand(hkdfCtxKeyIdentifier, nil, 16)
}

// keyAndIV derives the key the data is encrypted with (keySize bytes)
// and the first data unit's IV, as fscrypt does for the policy the
// options describe.
func (u *cryptUtil) keyAndIV(keySize int) ([]byte, *cryptIV, error) {
	methods := 0
	for _, b := range []bool{u.directKey, u.lblk64, u.lblk32} {
		if b {
			methods++
		}
	}
	if methods > 1 {
		return nil, nil, utilMsg("Conflicting IV methods specified")
	}
	if methods > 0 && u.kdf == "AES-128-ECB" {
		return nil, nil, errors.New("--kdf=AES-128-ECB is incompatible with IV method options")
	}
	if len(u.masterKey) < keySize {
		return nil, nil, utilMsg("Master key is too short for cipher")
	}
	var key []byte
	switch u.kdf {
	case "", "none":
		key = append([]byte(nil), u.masterKey[:keySize]...)
	case "AES-128-ECB":
		// v1: the nonce is an AES-128 key that encrypts the master key
		// block by block (fscrypt's derive_key_aes).
		if u.nonce == nil {
			return nil, nil, errors.New("--kdf=AES-128-ECB requires --file-nonce")
		}
		b, _ := aes.NewCipher(u.nonce)
		key = make([]byte, keySize)
		for i := 0; i < keySize; i += aes.BlockSize {
			b.Encrypt(key[i:i+aes.BlockSize], u.masterKey[i:i+aes.BlockSize])
		}
	case "HKDF-SHA512":
		var ctx byte
		var data []byte
		switch {
		case u.directKey:
			if u.modeNum == 0 {
				return nil, nil, errors.New("--direct-key with KDF requires --mode-num")
			}
			ctx, data = hkdfCtxDirectKey, []byte{byte(u.modeNum)}
		case u.lblk64 || u.lblk32:
			flag := "--iv-ino-lblk-64"
			ctx = hkdfCtxIVInoLblk64
			if u.lblk32 {
				flag, ctx = "--iv-ino-lblk-32", hkdfCtxIVInoLblk32
			}
			if u.modeNum == 0 {
				return nil, nil, fmt.Errorf("%s with KDF requires --mode-num", flag)
			}
			if u.fsUUID == nil {
				return nil, nil, fmt.Errorf("%s with KDF requires --fs-uuid", flag)
			}
			data = append([]byte{byte(u.modeNum)}, u.fsUUID...)
		default:
			if u.nonce == nil {
				return nil, nil, errors.New("--kdf=HKDF-SHA512 requires --file-nonce or --iv-ino-lblk-{64,32}")
			}
			ctx, data = hkdfCtxPerFileEncKey, u.nonce
		}
		var err error
		if key, err = u.hkdfExpand(ctx, data, keySize); err != nil {
			return nil, nil, err
		}
	}
	iv := &cryptIV{}
	le := binary.LittleEndian
	switch {
	case u.directKey:
		if u.nonce == nil {
			return nil, nil, errors.New("--direct-key requires --file-nonce")
		}
		le.PutUint64(iv.bytes[0:], u.dataUnitIndex)
		copy(iv.bytes[8:], u.nonce)
	case u.lblk64:
		switch {
		case u.dataUnitIndex > 0xffffffff:
			return nil, nil, errors.New("iv-ino-lblk-64 can't use --data-unit-index > UINT32_MAX")
		case u.inode == 0:
			return nil, nil, errors.New("iv-ino-lblk-64 requires --inode-number")
		case u.inode > 0xffffffff:
			return nil, nil, errors.New("iv-ino-lblk-64 can't use --inode-number > UINT32_MAX")
		}
		le.PutUint32(iv.bytes[0:], uint32(u.dataUnitIndex))
		le.PutUint32(iv.bytes[4:], uint32(u.inode))
	case u.lblk32:
		switch {
		case u.dataUnitIndex > 0xffffffff:
			return nil, nil, errors.New("iv-ino-lblk-32 can't use --data-unit-index > UINT32_MAX")
		case u.inode == 0:
			return nil, nil, errors.New("iv-ino-lblk-32 requires --inode-number")
		case u.kdf != "HKDF-SHA512":
			return nil, nil, errors.New("--iv-ino-lblk-32 requires --kdf=HKDF-SHA512")
		}
		// The inode number hashed with SipHash-2-4 under the inode hash
		// key (fscrypt_hash_inode_number), plus the index, mod 2^32.
		hk, err := u.hkdfExpand(hkdfCtxInodeHashKey, nil, 16)
		if err != nil {
			return nil, nil, err
		}
		var ino [8]byte
		le.PutUint64(ino[:], u.inode)
		h := siphash.New(hk)
		h.Write(ino[:])
		le.PutUint32(iv.bytes[0:], uint32(h.Sum64())+uint32(u.dataUnitIndex))
	default:
		le.PutUint64(iv.bytes[0:], u.dataUnitIndex)
	}
	return key, iv, nil
}

// cryptIV is union fscrypt_iv: 32 bytes, the index in the first 8 (or 4).
type cryptIV struct{ bytes [32]byte }

// next moves to the next data unit: the 64-bit index, or for the
// IV_INO_LBLK formats the 32-bit one (which wraps).
func (iv *cryptIV) next(index32 bool) {
	le := binary.LittleEndian
	if index32 {
		le.PutUint32(iv.bytes[0:], le.Uint32(iv.bytes[0:])+1)
		return
	}
	le.PutUint64(iv.bytes[0:], le.Uint64(iv.bytes[0:])+1)
}

// fscryptCipher is one of the program's ciphers: its key size, its
// smallest input, and a constructor of the en/decryption of one data
// unit in place with an IV.
type fscryptCipher struct {
	keySize, minInput int
	new               func(key []byte) (func(buf, iv []byte, decrypt bool) error, error)
}

var fscryptCiphers = map[string]fscryptCipher{
	"AES-256-XTS":       {keySize: 64, new: newXTS},
	"AES-256-CTS-CBC":   {keySize: 32, minInput: 16, new: newCTSCBC},
	"AES-128-CBC-ESSIV": {keySize: 16, new: newCBCESSIV},
	"AES-128-CTS-CBC":   {keySize: 16, minInput: 16, new: newCTSCBC},
	"AES-256-HCTR2":     {keySize: 32, minInput: 16, new: newHCTR2},
	"Adiantum":          {keySize: 32, minInput: 16, new: newAdiantum},
}

var errCryptLen = utilMsg("Input size is not a multiple of the AES block size, or too small")

// utilMsg is one of the program's messages, worded (and capitalised) as
// the program prints it.
type utilMsg string

func (m utilMsg) Error() string { return string(m) }

// newXTS is AES-XTS (IEEE 1619): the key's halves encrypt the data and
// the tweak (the IV's first 16 bytes), the tweak doubles in GF(2^128)
// per block, and a partial last block steals ciphertext.
func newXTS(key []byte) (func([]byte, []byte, bool) error, error) {
	k1, err := aes.NewCipher(key[:len(key)/2])
	if err != nil {
		return nil, err
	}
	k2, err := aes.NewCipher(key[len(key)/2:])
	if err != nil {
		return nil, err
	}
	return func(buf, iv []byte, decrypt bool) error {
		if len(buf) < 16 {
			return errCryptLen
		}
		var t [16]byte
		k2.Encrypt(t[:], iv[:16])
		one := func(b []byte, t *[16]byte) {
			var x [16]byte
			subtleXOR(x[:], b, t[:])
			if decrypt {
				k1.Decrypt(x[:], x[:])
			} else {
				k1.Encrypt(x[:], x[:])
			}
			subtleXOR(b, x[:], t[:])
		}
		full := len(buf) / 16
		rem := len(buf) % 16
		if rem != 0 {
			full--
		}
		for i := 0; i < full; i++ {
			one(buf[16*i:16*i+16], &t)
			gfDouble(&t)
		}
		if rem == 0 {
			return nil
		}
		// Ciphertext stealing over the last full block and the partial.
		last := buf[16*full : 16*full+16]
		tail := buf[16*full+16:]
		if !decrypt {
			one(last, &t)
			var pp [16]byte
			copy(pp[:], last)
			copy(pp[:], tail)
			copy(pp[rem:], last[rem:])
			copy(tail, last[:rem])
			gfDouble(&t)
			one(pp[:], &t)
			copy(last, pp[:])
			return nil
		}
		t2 := t
		gfDouble(&t2)
		one(last, &t2)
		var cc [16]byte
		copy(cc[:], tail)
		copy(cc[rem:], last[rem:])
		copy(tail, last[:rem])
		one(cc[:], &t)
		copy(last, cc[:])
		return nil
	}, nil
}

// gfDouble multiplies an XTS tweak by x (little-endian GF(2^128)).
func gfDouble(t *[16]byte) {
	carry := t[15] >> 7
	for i := 15; i > 0; i-- {
		t[i] = t[i]<<1 | t[i-1]>>7
	}
	t[0] = t[0]<<1 ^ 0x87*carry
}

func subtleXOR(dst, a, b []byte) {
	for i := range dst {
		dst[i] = a[i] ^ b[i]
	}
}

// newCTSCBC is CBC with ciphertext stealing as the kernel's cts(cbc(aes))
// does it (CS3: the last two blocks swapped, the last one partial); a
// single block is plain CBC.
func newCTSCBC(key []byte) (func([]byte, []byte, bool) error, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return func(buf, iv []byte, decrypt bool) error {
		n := len(buf)
		if n < 16 {
			return errCryptLen
		}
		ivb := iv[:16]
		if n == 16 {
			if decrypt {
				cipher.NewCBCDecrypter(b, ivb).CryptBlocks(buf, buf)
			} else {
				cipher.NewCBCEncrypter(b, ivb).CryptBlocks(buf, buf)
			}
			return nil
		}
		// The blocks before the last two are plain CBC.
		rem := n % 16
		if rem == 0 {
			rem = 16
		}
		head := n - 16 - rem
		if !decrypt {
			prev := append([]byte(nil), ivb...)
			if head > 0 {
				cipher.NewCBCEncrypter(b, ivb).CryptBlocks(buf[:head], buf[:head])
				copy(prev, buf[head-16:head])
			}
			// E_{n-1} = E(P_{n-1} ^ C_{n-2}); C_n = E(P_n||0 ^ E_{n-1}).
			var en1, pn [16]byte
			subtleXOR(en1[:], buf[head:head+16], prev)
			b.Encrypt(en1[:], en1[:])
			copy(pn[:], buf[head+16:])
			subtleXOR(pn[:], pn[:], en1[:])
			b.Encrypt(pn[:], pn[:])
			copy(buf[head:head+16], pn[:])
			copy(buf[head+16:], en1[:rem])
			return nil
		}
		prev := append([]byte(nil), ivb...)
		if head > 0 {
			copy(prev, buf[head-16:head])
			cipher.NewCBCDecrypter(b, ivb).CryptBlocks(buf[:head], buf[:head])
		}
		// D(C_n) = P_n||0 ^ E_{n-1} with E_{n-1}'s head the stolen tail.
		var dn, en1 [16]byte
		b.Decrypt(dn[:], buf[head:head+16])
		copy(en1[:], buf[head+16:])
		copy(en1[rem:], dn[rem:])
		var pn [16]byte
		subtleXOR(pn[:], dn[:], en1[:])
		b.Decrypt(en1[:], en1[:])
		subtleXOR(en1[:], en1[:], prev)
		copy(buf[head:head+16], en1[:])
		copy(buf[head+16:], pn[:rem])
		return nil
	}, nil
}

// newCBCESSIV is AES-128-CBC with ESSIV IVs: the IV encrypted with
// AES-256 under SHA-256 of the key.
func newCBCESSIV(key []byte) (func([]byte, []byte, bool) error, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	salt := sha256.Sum256(key)
	essiv, _ := aes.NewCipher(salt[:])
	return func(buf, iv []byte, decrypt bool) error {
		if len(buf)%16 != 0 {
			return errCryptLen
		}
		var eiv [16]byte
		essiv.Encrypt(eiv[:], iv[:16])
		if decrypt {
			cipher.NewCBCDecrypter(b, eiv[:]).CryptBlocks(buf, buf)
		} else {
			cipher.NewCBCEncrypter(b, eiv[:]).CryptBlocks(buf, buf)
		}
		return nil
	}, nil
}

// newHCTR2 is AES-256-HCTR2 with the 32-byte IV as its tweak.
func newHCTR2(key []byte) (func([]byte, []byte, bool) error, error) {
	h, err := hctr2.New(key)
	if err != nil {
		return nil, err
	}
	return func(buf, iv []byte, decrypt bool) error {
		if decrypt {
			return h.Decrypt(buf, buf, iv[:32])
		}
		return h.Encrypt(buf, buf, iv[:32])
	}, nil
}

// newAdiantum is Adiantum (XChaCha12, AES-256, NH and Poly1305) with the
// 32-byte IV as its tweak.
func newAdiantum(key []byte) (func([]byte, []byte, bool) error, error) {
	a, err := adiantum.New(key)
	if err != nil {
		return nil, err
	}
	return func(buf, iv []byte, decrypt bool) error {
		if decrypt {
			return a.Decrypt(buf, buf, iv[:32])
		}
		return a.Encrypt(buf, buf, iv[:32])
	}, nil
}

func init() {
	xfstestsPrograms["fscrypt-crypt-util"] = cmdFscryptCryptUtil
}
