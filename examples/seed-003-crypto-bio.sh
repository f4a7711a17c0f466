# Seed 003 (crypto-bio): reading an encrypted file decrypts its blocks in
# the bio's completion: on a workqueue (base), inline, as chained requests
# or as one whole-bio request. The shell's ext4 reads a file as Linux does:
# filemap_read, readahead (one 16 KiB window here), ext4_mpage_readpages'
# bio, its completion (mpage_end_io) and fscrypt_decrypt_bio, as sim's read
# workload does over a loop device. `events` counts the shell's own task,
# in whose context the device completes the bio: in the workqueue variant
# it only queues the decrypt work (fscrypt_decrypt_work, queue_work), whose
# decryption a kworker does and counts; inline and chain decrypt here with
# a request per data unit (kmalloc'd, as in seed 003's kernel), bio with
# one request for the whole bio. As posted, bio's x86 XTS glue increments
# the tweak instead of the IV, so every data unit after the first in the
# bio comes out wrong: its md5sum differs from the other three.
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
	_scratch_unmount
done
