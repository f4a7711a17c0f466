# f2fs supports sub-block data units (f2fs_cryptops.supports_subblock_data_units,
# fs/f2fs/super.c, since Linux 6.7): a v2 policy with log2_data_unit_size 9
# is accepted, read back, and its files keep their contents over a remount.
# xfs_io's set_encpolicy has -s since xfsprogs 6.6; in the Linux guest,
# whose xfs_io is Debian 12's 6.1, linuxvm's set_encpolicy helper stands in
# for that one command. A v1 policy takes no data unit size (xfs_io
# refuses it before any ioctl).
mkfs.f2fs -q -f -O encrypt $SCRATCH_DEV >/dev/null
_scratch_mount -t f2fs
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY"
for du in 9 10 12 8 13; do
	mkdir $SCRATCH_MNT/du$du
	if _set_encpolicy $SCRATCH_MNT/du$du $TEST_KEY_IDENTIFIER -s $du 2>$tmp.err; then
		_get_encpolicy $SCRATCH_MNT/du$du | _filter_scratch
		seq 1 2000 > $SCRATCH_MNT/du$du/file
	else
		_filter_scratch < $tmp.err
	fi
done
mkdir $SCRATCH_MNT/v1
_set_encpolicy $SCRATCH_MNT/v1 0000111122223333 -s 9 || echo "v1 with -s: status $?"
_scratch_cycle_mount
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
for du in 9 10 12; do
	seq 1 2000 | cmp - $SCRATCH_MNT/du$du/file && echo "du $du: same contents"
done
_scratch_unmount
