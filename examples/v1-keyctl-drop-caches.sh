# User report: with a legacy v1 policy whose key is in the session keyring
# (keyctl), names stay visible after `keyctl unlink` until drop_caches:
# fscrypt finds the key in the process's keyrings when it sets up an inode
# (find_and_lock_process_key), and the inode keeps it until it is evicted.
# drop_caches evicts only clean inodes: each drop follows a sync, as it
# must on Linux (right after the writes the dirty inodes and their keys
# would stay).
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/v1
_set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_get_encpolicy $SCRATCH_MNT/v1 | _filter_scratch
touch $SCRATCH_MNT/v1/early
# struct fscrypt_key: mode, raw[64], size (64), as "fscrypt:DESCRIPTOR".
echo -ne "\x00\x00\x00\x00${TEST_RAW_KEY}\x40\x00\x00\x00" |
	keyctl padd logon fscrypt:$TEST_KEY_DESCRIPTOR @s >/dev/null
keyctl show
mkdir $SCRATCH_MNT/v1/sub
echo one > $SCRATCH_MNT/v1/sub/file
ls $SCRATCH_MNT/v1/sub
sync
echo 2 > /proc/sys/vm/drop_caches
cat $SCRATCH_MNT/v1/sub/file
keyctl unlink $(keyctl search @s logon fscrypt:$TEST_KEY_DESCRIPTOR)
echo "after unlink: $(ls $SCRATCH_MNT/v1/sub)"
cat $SCRATCH_MNT/v1/sub/file
touch $SCRATCH_MNT/v1/sub/new
sync
echo 3 > /proc/sys/vm/drop_caches
# The no-key name comes from sub's nonce, which the seed fixes.
ls $SCRATCH_MNT/v1
cat $SCRATCH_MNT/v1/sub/file
