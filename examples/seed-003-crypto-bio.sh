# Seed 003 (crypto-bio): reading an encrypted file decrypts its blocks in
# the bio's completion: on a workqueue (base), inline, as chained requests
# or as one whole-bio request. The shell's ext4 reads pages through the
# generic read path (FilemapRead, fscrypt_decrypt_pagecache_blocks), not the
# modelled bio read path of sim's workloads, so the four variants print the
# same counts here: the seed's effect is not reachable from the shell yet.
scenario() {
	_scratch_mkfs_encrypted
	_scratch_mount
	mkdir $SCRATCH_MNT/enc
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	_set_encpolicy $SCRATCH_MNT/enc $TEST_KEY_IDENTIFIER
	xfs_io -f -c "pwrite 0 16k" $SCRATCH_MNT/enc/file | _filter_xfs_io
	events reset
	md5sum $SCRATCH_MNT/enc/file | _filter_scratch
	events | grep -vE '^(d_lookup|dget|dput|lockref|path_walk|rcu_read|syscall|vfs_open)'
}
for v in workqueue inline chain bio; do
	echo "== crypto-bio=$v"
	patches crypto-bio=$v
	scenario
done
