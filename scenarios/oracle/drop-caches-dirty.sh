# drop_caches drops only clean caches (prune_icache_sb leaves dirty inodes
# on no LRU): right after changes, a v1-encrypted directory keeps its
# plaintext names and contents, with the key it found, until writeback;
# after sync the inodes are clean, are evicted, and the key is gone.
# vfslab sh --fs ext4
# kernel: 6.12
_scratch_mkfs_encrypted >/dev/null
_scratch_mount
mkdir $SCRATCH_MNT/v1
_set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_add_session_encryption_key $TEST_KEY_DESCRIPTOR "$TEST_RAW_KEY"
mkdir $SCRATCH_MNT/v1/sub
echo data > $SCRATCH_MNT/v1/sub/f
_unlink_session_encryption_key $TEST_KEY_DESCRIPTOR
echo 3 > /proc/sys/vm/drop_caches
echo "dirty: $(ls $SCRATCH_MNT/v1) $(cat $SCRATCH_MNT/v1/sub/f)"
sync
echo 3 > /proc/sys/vm/drop_caches
echo "clean: $(ls $SCRATCH_MNT/v1 | wc -l) name(s)"
cat $SCRATCH_MNT/v1/sub/f
_scratch_unmount
