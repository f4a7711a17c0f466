# lsattr on f2fs: f2fs_new_inode gives every new directory F2FS_INDEX_FL
# ("I") and inline dentries ("N"), a new regular file inline data ("N")
# unless it is encrypted; mkfs.f2fs's root has a dentry block and no flag.
# vfslab sh --fs f2fs
# kernel: 6.12
mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null
_scratch_mount
mkdir $SCRATCH_MNT/d $SCRATCH_MNT/c $SCRATCH_MNT/e
chattr +F $SCRATCH_MNT/c
touch $SCRATCH_MNT/f
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $SCRATCH_MNT/e $TEST_KEY_IDENTIFIER
touch $SCRATCH_MNT/e/x
lsattr -d $SCRATCH_MNT $SCRATCH_MNT/c $SCRATCH_MNT/d $SCRATCH_MNT/e $SCRATCH_MNT/f $SCRATCH_MNT/e/x | _filter_scratch
_scratch_unmount
