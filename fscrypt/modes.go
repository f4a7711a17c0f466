package fscrypt

import (
	"fmt"
	"strconv"
	"strings"
)

// Mode numbers (include/uapi/linux/fscrypt.h FSCRYPT_MODE_*).
const (
	ModeAES256XTS      = 1
	ModeAES256CTS      = 4
	ModeAES128CBC      = 5 // AES-128-CBC-ESSIV
	ModeAES128CTS      = 6
	ModeAdiantum       = 9
	ModeAES256HCTR2    = 10
	modeMax            = ModeAES256HCTR2
	fileNonceSize      = 16
	keyDescriptorSize  = 8
	keyIdentifierSize  = 16
	minKeySize         = 16
	maxKeySize         = 64
	maxIVSize          = 32
	fnameMinMsgLen     = 16 // FSCRYPT_FNAME_MIN_MSG_LEN
	contentsAlignment  = 16 // FSCRYPT_CONTENTS_ALIGNMENT
	nameMax            = 255
	sectorShift        = 9
	maxRawKeySize      = maxKeySize
	directKeyMinIVSize = 24 // offsetofend(union fscrypt_iv, nonce)
)

// FnameMinMsgLen is FSCRYPT_FNAME_MIN_MSG_LEN: the shortest ciphertext
// name (one cipher block); fscrypt_fname_disk_to_usr refuses shorter
// on-disk names with EUCLEAN.
const FnameMinMsgLen = fnameMinMsgLen

// FileNonceSize is FSCRYPT_FILE_NONCE_SIZE, KeyIdentifierSize
// FSCRYPT_KEY_IDENTIFIER_SIZE and KeyDescriptorSize
// FSCRYPT_KEY_DESCRIPTOR_SIZE.
const (
	FileNonceSize     = fileNonceSize
	KeyIdentifierSize = keyIdentifierSize
	KeyDescriptorSize = keyDescriptorSize
	// MinKeySize and MaxKeySize bound a raw master key
	// (FSCRYPT_MIN_KEY_SIZE, FSCRYPT_MAX_RAW_KEY_SIZE).
	MinKeySize = minKeySize
	MaxKeySize = maxKeySize
)

// Mode is one entry of fs/crypto/keysetup.c's fscrypt_modes[] table.
type Mode struct {
	// Num is the FSCRYPT_MODE_* number.
	Num int
	// FriendlyName is the name the kernel logs and xfstests' fscrypt-crypt-util
	// takes ("AES-256-XTS").
	FriendlyName string
	// CipherStr is the Crypto API algorithm name ("xts(aes)").
	CipherStr string
	// KeySize and IVSize are in bytes; SecurityStrength is the minimum v2
	// master key size for the mode.
	KeySize          int
	SecurityStrength int
	IVSize           int
}

// String is the mode's friendly name.
func (m *Mode) String() string { return m.FriendlyName }

var modes = [modeMax + 1]*Mode{
	ModeAES256XTS:   {ModeAES256XTS, "AES-256-XTS", "xts(aes)", 64, 32, 16},
	ModeAES256CTS:   {ModeAES256CTS, "AES-256-CTS-CBC", "cts(cbc(aes))", 32, 32, 16},
	ModeAES128CBC:   {ModeAES128CBC, "AES-128-CBC-ESSIV", "essiv(cbc(aes),sha256)", 16, 16, 16},
	ModeAES128CTS:   {ModeAES128CTS, "AES-128-CTS-CBC", "cts(cbc(aes))", 16, 16, 16},
	ModeAdiantum:    {ModeAdiantum, "Adiantum", "adiantum(xchacha12,aes)", 32, 32, 32},
	ModeAES256HCTR2: {ModeAES256HCTR2, "AES-256-HCTR2", "hctr2(aes)", 32, 32, 32},
}

// ModeByNum returns the mode numbered n, or nil.
func ModeByNum(n int) *Mode {
	if n < 0 || n > modeMax {
		return nil
	}
	return modes[n]
}

// Modes returns the supported modes in number order.
func Modes() []*Mode {
	var out []*Mode
	for _, m := range modes {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// ParseMode accepts a friendly name (case-insensitive; "AES-128-CBC" is taken
// for AES-128-CBC-ESSIV as in the uapi header) or a mode number.
func ParseMode(s string) (*Mode, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if m := ModeByNum(n); m != nil {
			return m, nil
		}
		return nil, fmt.Errorf("unknown encryption mode number %d", n)
	}
	for _, m := range Modes() {
		if strings.EqualFold(s, m.FriendlyName) {
			return m, nil
		}
	}
	if strings.EqualFold(s, "AES-128-CBC") {
		return modes[ModeAES128CBC], nil
	}
	var names []string
	for _, m := range Modes() {
		names = append(names, m.FriendlyName)
	}
	return nil, fmt.Errorf("unknown encryption mode %q; valid: %s", s, strings.Join(names, ", "))
}

// validEncModesV1 is fs/crypto/policy.c fscrypt_valid_enc_modes_v1.
func validEncModesV1(contents, filenames uint8) bool {
	switch {
	case contents == ModeAES256XTS && filenames == ModeAES256CTS:
		return true
	case contents == ModeAES128CBC && filenames == ModeAES128CTS:
		return true
	case contents == ModeAdiantum && filenames == ModeAdiantum:
		return true
	}
	return false
}

// validEncModesV2 is fs/crypto/policy.c fscrypt_valid_enc_modes_v2.
func validEncModesV2(contents, filenames uint8) bool {
	if contents == ModeAES256XTS && filenames == ModeAES256HCTR2 {
		return true
	}
	return validEncModesV1(contents, filenames)
}
