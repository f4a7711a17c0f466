# The flusher writes back inodes dirty for longer than
# dirty_expire_centisecs (30 s; it wakes every 5 s): after that a
# drop_caches evicts them as after sync.
# vfslab sh --fs ext4
# kernel: 6.12
_scratch_mkfs_encrypted >/dev/null
_scratch_mount
mkdir $SCRATCH_MNT/v1
_set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_add_session_encryption_key $TEST_KEY_DESCRIPTOR "$TEST_RAW_KEY"
echo data > $SCRATCH_MNT/v1/f
_unlink_session_encryption_key $TEST_KEY_DESCRIPTOR
sleep 40
echo 3 > /proc/sys/vm/drop_caches
echo "after 40 s: $(ls $SCRATCH_MNT/v1 | wc -l) name(s)"
cat $SCRATCH_MNT/v1/f
_scratch_unmount
