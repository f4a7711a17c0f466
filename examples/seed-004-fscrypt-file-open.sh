# Seed 004 (fscrypt-file-open): opening a file whose parent is not
# encrypted takes and drops a reference on the parent (two lockref
# operations) in the base variant, none on the RCU fast path of v1/v2.
scenario() {
	_scratch_mkfs_encrypted
	_scratch_mount
	mkdir $SCRATCH_MNT/plain
	echo data > $SCRATCH_MNT/plain/file
	events reset
	cat $SCRATCH_MNT/plain/file
	events | grep -E 'lockref_rmw|fscrypt_file_open|dget'
	_scratch_unmount
}
patches fscrypt-file-open=base
scenario
patches fscrypt-file-open=v2
scenario
