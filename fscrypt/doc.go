// Package fscrypt models fs/crypto, the kernel's filesystem-level encryption:
// encryption policies and the per-inode contexts that store them, the
// per-filesystem keyring of master keys, per-inode key setup (v1 AES-ECB key
// derivation, v2 HKDF-SHA512 subkeys, DIRECT_KEY, IV_INO_LBLK_64/32 and
// dirhash keys), filename encryption and no-key names, contents encryption
// per data unit with the kernel's IV forms, the read-path bio decryption, and
// encrypted symlinks.
//
// Everything that reaches "disk" is byte-identical to what Linux writes for
// the same key, nonce and policy; testdata/ holds known answers generated
// with an independent implementation (see testdata/README).
//
// # Layering
//
// fscrypt sits below the VFS. What it needs from an inode and a superblock is
// declared here as small interfaces, [Inode], [SuperBlock] and [Operations]
// (struct inode's fields, sb->s_cop and sb->s_master_keys); package vfs
// implements them. A filesystem calls the functions named after the kernel's
// exported ones: [SetupFilename], [FnameEncrypt], [FnameDiskToUsr],
// [MatchName], [FnameSiphash], [PrepareNewInode], [SetContext],
// [GetEncryptionInfo], [PutEncryptionInfo], [HasPermittedContext],
// [EncryptPagecacheBlocks], [DecryptPagecacheBlocks], [DecryptBio],
// [PrepareSymlink], [EncryptSymlink], [GetSymlink], and the ioctl handlers
// [IoctlSetPolicy], [IoctlGetPolicy], [IoctlGetPolicyEx], [IoctlGetNonce],
// [IoctlAddKey], [IoctlRemoveKey], [IoctlRemoveKeyAllUsers] and
// [IoctlGetKeyStatus]. Go names are the kernel's with the "fscrypt_" prefix
// dropped.
//
// # Patches
//
// Three modelled patches live here (see patch_*.go): fscrypt-fname-onstack
// (seed 000: how filename requests and tfms are allocated), fscrypt-v1-kdf
// (seed 002: the v1 key derivation) and crypto-bio (seed 003: how the read
// path decrypts a bio). The variant in force comes from the superblock's
// patch.Set.
package fscrypt
