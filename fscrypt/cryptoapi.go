package fscrypt

// TEMPORARY glue: direct calls into the cipher packages until the Crypto
// API model (package crypto) exposes its skcipher interface.

import (
	"crypto/sha256"

	"github.com/vfslab/vfslab/crypto/adiantum"
	"github.com/vfslab/vfslab/crypto/aes"
	"github.com/vfslab/vfslab/crypto/hctr2"
	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// CryptoAPI is the machine's Crypto API.
type CryptoAPI = any

type cryptoTfm struct {
	mode *Mode
	xts  *aes.XTS
	cts  *aes.CTSCBC
	cbc  *aes.CBC
	ess  aes.Ctx
	adi  *adiantum.Cipher
	hc   *hctr2.Cipher
}

func allocateSkcipher(t *kernel.Task, mode *Mode, rawKey []byte, inode Inode) (*cryptoTfm, error) {
	tfm := &cryptoTfm{mode: mode}
	var err error
	switch mode.Num {
	case ModeAES256XTS:
		tfm.xts = new(aes.XTS)
		err = tfm.xts.SetKey(rawKey)
	case ModeAES256CTS, ModeAES128CTS:
		tfm.cts = new(aes.CTSCBC)
		err = tfm.cts.SetKey(rawKey)
	case ModeAES128CBC:
		tfm.cbc = new(aes.CBC)
		err = tfm.cbc.SetKey(rawKey)
		h := sha256.Sum256(rawKey)
		if err == nil {
			err = aes.ExpandKey(&tfm.ess, h[:])
		}
	case ModeAdiantum:
		tfm.adi, err = adiantum.New(rawKey)
	case ModeAES256HCTR2:
		tfm.hc, err = hctr2.New(rawKey)
	default:
		err = errENOPKG
	}
	if err != nil {
		return nil, err
	}
	return tfm, nil
}

func (tfm *cryptoTfm) free(t *kernel.Task) {}

func (tfm *cryptoTfm) driverName() string { return tfm.mode.CipherStr }

func (tfm *cryptoTfm) crypt(enc bool, dst, src, iv []byte) error {
	var b [16]byte
	switch tfm.mode.Num {
	case ModeAES256XTS:
		copy(b[:], iv)
		if enc {
			return tfm.xts.Encrypt(dst, src, &b)
		}
		return tfm.xts.Decrypt(dst, src, &b)
	case ModeAES256CTS, ModeAES128CTS:
		copy(b[:], iv)
		if enc {
			return tfm.cts.Encrypt(dst, src, &b)
		}
		return tfm.cts.Decrypt(dst, src, &b)
	case ModeAES128CBC:
		tfm.ess.Encrypt(b[:], iv[:16])
		if enc {
			return tfm.cbc.Encrypt(dst, src, &b)
		}
		return tfm.cbc.Decrypt(dst, src, &b)
	case ModeAdiantum:
		if enc {
			return tfm.adi.Encrypt(dst, src, iv)
		}
		return tfm.adi.Decrypt(dst, src, iv)
	case ModeAES256HCTR2:
		if enc {
			return tfm.hc.Encrypt(dst, src, iv)
		}
		return tfm.hc.Decrypt(dst, src, iv)
	}
	return errno.EINVAL
}

func fnameCrypt(t *kernel.Task, inode Inode, ci *InodeInfo, enc bool, dst, src, iv []byte) error {
	return ci.encKey.crypt(enc, dst, src, iv)
}

func contentsCrypt(t *kernel.Task, ci *InodeInfo, enc bool, dst, src, iv []byte) error {
	return ci.encKey.crypt(enc, dst, src, iv)
}

func deriveKeyAES(t *kernel.Task, sb SuperBlock, masterKey, nonce, derived []byte) error {
	var e aes.ECB
	if err := e.SetKey(nonce); err != nil {
		return err
	}
	return e.Encrypt(derived, masterKey)
}
