package fscrypt_test

import (
	"github.com/vfslab/vfslab/crypto"
	"github.com/vfslab/vfslab/fscrypt"
)

// newAPI returns the machine's Crypto API for a test superblock.
func newAPI() fscrypt.CryptoAPI { return crypto.NewAPI() }
