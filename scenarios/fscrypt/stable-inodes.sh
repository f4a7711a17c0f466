# IV_INO_LBLK_64 and IV_INO_LBLK_32 policies need stable inode numbers:
# ext4_has_stable_inodes is the stable_inodes feature (fs/ext4/crypto.c),
# f2fs_has_stable_inodes is always true (fs/crypto/policy.c
# supported_iv_ino_lblk_policy refuses the policy with EINVAL otherwise).
for feat in encrypt encrypt,stable_inodes; do
	echo "# mkfs.ext4 -O $feat"
	mkfs.ext4 -q -F -O $feat $SCRATCH_DEV
	_scratch_mount -t ext4
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	for flags in 0x8 0x10; do
		mkdir $SCRATCH_MNT/d$flags
		if _set_encpolicy $SCRATCH_MNT/d$flags $TEST_KEY_IDENTIFIER -f $flags 2>$tmp.err; then
			echo "flags $flags: set"
		else
			_filter_scratch < $tmp.err
		fi
	done
	echo data > $SCRATCH_MNT/d0x8/file 2>/dev/null && cat $SCRATCH_MNT/d0x8/file
	dmesg | grep -o "Can't use IV_INO_LBLK_[0-9]* policy on filesystem .* because it doesn't have stable inode numbers" | sed 's/filesystem .* because/filesystem DEV because/'
	dmesg -c >/dev/null
	_scratch_unmount
done
echo "# mkfs.f2fs -O encrypt"
mkfs.f2fs -q -f -O encrypt $SCRATCH_DEV >/dev/null
_scratch_mount -t f2fs
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
mkdir $SCRATCH_MNT/d
_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER -f 0x8
echo "f2fs flags 0x8: $?"
_scratch_unmount
