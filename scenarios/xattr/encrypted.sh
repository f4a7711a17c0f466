# vfslab sh --fs ext4
# kernel: 6.12
# The encryption context is an xattr of index 9 that no handler names:
# getfattr never lists it, no name reaches it, and user attributes sit
# beside it in the inode. Special files in an encrypted directory get no
# context of their own (fscrypt_prepare_new_inode).
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/edir
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $SCRATCH_MNT/edir $TEST_KEY_IDENTIFIER
getfattr -d -m - $SCRATCH_MNT/edir; echo "listed: $?"
setfattr -n user.x -v 1 $SCRATCH_MNT/edir
getfattr -d -m - $SCRATCH_MNT/edir
getfattr -n encryption.c $SCRATCH_MNT/edir; echo "encryption.c: $?"
touch $SCRATCH_MNT/edir/file
setfattr -n user.y -v 2 $SCRATCH_MNT/edir/file
getfattr -d -m - $SCRATCH_MNT/edir/file
mkfifo $SCRATCH_MNT/edir/fifo; echo "mkfifo: $?"
stat -c %F $SCRATCH_MNT/edir/fifo
_get_encpolicy $SCRATCH_MNT/edir/file | sed "s|$SCRATCH_MNT|SCRATCH_MNT|" | head -2
