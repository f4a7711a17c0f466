# f2fs keeps a regular file's data in its inode while it fits
# (MAX_INLINE_DATA: 3488 bytes with the default inline_xattr, 3452 with
# extra_attr's 36 bytes): a write that ends within it stays inline
# (fs/f2fs/data.c prepare_write_begin), one that reaches past it moves the
# data to a block (f2fs_convert_inline_page); encrypted files are never
# inline (f2fs_may_inline_data). lsattr shows FS_INLINE_DATA_FL as N.
# vfslab sh --fs f2fs
for feat in "" "-O extra_attr"; do
	echo "# mkfs.f2fs $feat"
	mkfs.f2fs -q -f $feat -O encrypt $SCRATCH_DEV >/dev/null
	_scratch_mount
	for n in 0 5 3452 3453 3488 3489; do
		seq 1 2000 | head -c $n >$SCRATCH_MNT/f$n
	done
	echo abc >>$SCRATCH_MNT/f5
	seq 1 2000 | head -c 3000 >>$SCRATCH_MNT/f5
	printf x | dd of=$SCRATCH_MNT/f0 bs=1 seek=5000 status=none
	lsattr $SCRATCH_MNT/f* | _filter_scratch
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	mkdir $SCRATCH_MNT/enc
	_set_encpolicy $SCRATCH_MNT/enc $TEST_KEY_IDENTIFIER
	echo hi >$SCRATCH_MNT/enc/small
	lsattr $SCRATCH_MNT/enc/small | _filter_scratch
	_scratch_cycle_mount
	md5sum $SCRATCH_MNT/f* | _filter_scratch
	stat -c '%n %s' $SCRATCH_MNT/f* | _filter_scratch
	_scratch_unmount
done
