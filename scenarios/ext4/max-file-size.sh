# ext4's s_maxbytes is ext4_max_size (fs/ext4/super.c) for the block size:
# (2^32 - 1) blocks, so 2^42 - 1024 bytes with 1 KiB blocks and
# 2^44 - 4096 with 4 KiB; truncate or write past it is EFBIG
# (inode_newsize_ok, generic_write_checks). With 1 KiB blocks the largest
# data unit index fits in 32 bits, so IV_INO_LBLK_64 is allowed
# (fscrypt_max_file_dun_bits).
for bs in 1024 4096; do
	echo "# block size $bs"
	mkfs.ext4 -q -F -b $bs -O encrypt,stable_inodes $SCRATCH_DEV
	_scratch_mount -t ext4
	max=$(( (4294967295) * bs ))
	touch $SCRATCH_MNT/f
	truncate -s $max $SCRATCH_MNT/f && stat -c %s $SCRATCH_MNT/f
	truncate -s $((max + 1)) $SCRATCH_MNT/f 2>&1 | _filter_scratch
	truncate -s $((5 << 40)) $SCRATCH_MNT/f 2>&1 | _filter_scratch
	xfs_io -c "pwrite $((max - 1)) 1" -c "pwrite $max 1" $SCRATCH_MNT/f 2>&1 >/dev/null | _filter_scratch
	rm $SCRATCH_MNT/f
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	mkdir $SCRATCH_MNT/d
	_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER -f 0x8 && echo "IV_INO_LBLK_64: set"
	_scratch_unmount
done
