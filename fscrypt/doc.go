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
// path decrypts a bio). The variant in force comes from the simulated
// kernel's patch.Set (kernel.Kernel.Patches), read through each patch's
// typed Selector.
//
// fscrypt-fname-onstack decides how a prepared key's tfm is allocated, not
// only how filename requests are: base and v2 allocate with
// crypto_alloc_skcipher(name, 0, 0), so an asynchronous hardware engine of
// higher priority is chosen and waited for (base), or, with v2, trips the
// seed's BUG_ON when its reqsize exceeds 384 and otherwise gets v2's
// leaked heap encryption requests and its on-stack decryption requests
// (Linux 6.6 queues those; the DMA-API debug check reports the stack
// memory the driver maps); upstream allocates a crypto_sync_skcipher with
// FSCRYPT_CRYPTOAPI_MASK and never sees the engine. Contents follow the
// kernel of each variant: an allocated request per data unit before 6.17,
// a sync on-stack request with upstream. fscrypt-v1-kdf selects how
// setup_v1_file_key_derived derives (DeriveV1Key), crypto-bio how DecryptBio
// decrypts a read bio and where ReadPath runs it. The crypto-bio "bio"
// variant is faithful to the RFC, including its defect: its le64 IV
// increment is wrong for IV_INO_LBLK_32 policies when a bio crosses the
// 2^32 IV wrap (TestCryptoBioIVInoLblk32Wrap).
//
// # Benchmarks
//
//	go test -run '^$' -bench V1KDF ./fscrypt      # ns and allocs per derived key, per variant, and HKDF
//	go test -run '^$' -bench Fname ./fscrypt      # per name encrypted/decrypted, per variant
//	go test -run '^$' -bench ReadPath ./fscrypt -args -fscrypt.readmib=256
//	                                              # read MB/s of an encrypted file per crypto-bio variant
package fscrypt
