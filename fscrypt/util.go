package fscrypt

import (
	"encoding/binary"
	"syscall"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/events"
)

// Linux errno values package errno does not define yet.
var (
	// errENOPKG is ENOPKG (65): fscrypt returns it when the Crypto API has
	// no implementation of a mode's algorithm.
	errENOPKG = syscall.Errno(65)
	// errENOBUFS is ENOBUFS (105).
	errENOBUFS = syscall.Errno(105)
)

// Events counted by fscrypt, once per operation.
var (
	EvFnameEncrypt     = events.Register("fscrypt_fname_encrypt", "filenames encrypted (fscrypt_fname_encrypt)")
	EvFnameDecrypt     = events.Register("fscrypt_fname_decrypt", "filenames decrypted (fname_decrypt)")
	EvNokeyEncode      = events.Register("fscrypt_nokey_encode", "no-key names presented (fscrypt_fname_disk_to_usr without the key)")
	EvFnameTooShort    = events.Register("fscrypt_fname_too_short", "on-disk encrypted names shorter than 16 bytes refused with EUCLEAN, which fscrypt_fname_disk_to_usr does without a log line")
	EvNokeyDecode      = events.Register("fscrypt_nokey_decode", "no-key names looked up (fscrypt_setup_filename without the key)")
	EvDataUnitCrypt    = events.Register("fscrypt_data_unit_crypt", "contents data units encrypted or decrypted (fscrypt_crypt_data_unit)")
	EvKeyDerive        = events.Register("fscrypt_key_derive", "per-file or per-mode keys derived (v1 AES-ECB or v2 HKDF)")
	EvBounceAlloc      = events.Register("fscrypt_bounce_page_alloc", "bounce pages allocated for encrypted writes")
	EvBioDecrypt       = events.Register("fscrypt_decrypt_bio", "bios decrypted on the read path (fscrypt_decrypt_bio)")
	EvDecryptWork      = events.Register("fscrypt_decrypt_work", "bios queued to the fscrypt read workqueue")
	EvKeySetupInode    = events.Register("fscrypt_setup_encryption_info", "per-inode key setups (fscrypt_setup_encryption_info)")
	EvAllocateSkcipher = events.Register("fscrypt_tfm_alloc", "tfms allocated by fscrypt_allocate_skcipher")
)

// errnoValue returns the positive errno of err, or EIO's.
func errnoValue(err error) int {
	if e, ok := errno.Of(err); ok {
		return int(e)
	}
	return int(errno.EIO)
}

func putLE64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
