# lsattr on ext4: every directory and regular file is extent-mapped, so
# FS_IOC_GETFLAGS shows EXT4_EXTENTS_FL ("e") beside "E" for an encrypted
# directory and "F" for a casefolded one (ext4_fileattr_get: i_flags &
# EXT4_FL_USER_VISIBLE).
# vfslab sh --fs ext4
# kernel: 6.12
mkfs.ext4 -q -F -O encrypt,casefold $SCRATCH_DEV
_scratch_mount
mkdir $SCRATCH_MNT/d $SCRATCH_MNT/e $SCRATCH_MNT/c
touch $SCRATCH_MNT/d/f
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $SCRATCH_MNT/e $TEST_KEY_IDENTIFIER
chattr +F $SCRATCH_MNT/c
lsattr -d $SCRATCH_MNT $SCRATCH_MNT/d $SCRATCH_MNT/d/f $SCRATCH_MNT/e $SCRATCH_MNT/c | _filter_scratch
_scratch_unmount
