# Seed 002 (fscrypt-v1-kdf): a v1 policy derives each file's key from the
# master key and the file's nonce; base allocates an ecb(aes) tfm and a
# request per derivation, sync puts the request on the stack, aeslib uses
# the AES library.
scenario() {
	_scratch_mkfs_encrypted
	_scratch_mount
	mkdir $SCRATCH_MNT/v1
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" -d $TEST_KEY_DESCRIPTOR >/dev/null
	_set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
	events reset
	echo data > $SCRATCH_MNT/v1/file
	events | grep -E '^kmalloc|^kfree|tfm|skcipher|aes'
}
for v in base sync aeslib; do
	echo "== fscrypt-v1-kdf=$v"
	patches fscrypt-v1-kdf=$v
	scenario
	_scratch_unmount
done
