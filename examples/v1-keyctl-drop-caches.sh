# User report: with a legacy v1 policy, names stay visible after the key
# is removed until drop_caches. The model's fscrypt does not search the
# session keyring for v1 keys (find_and_lock_process_key), so the key is
# added to the filesystem (xfs_io add_enckey -d) and its removal shows the
# kernel's eviction; keyctl's own key is shown to unlock nothing.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/ks $SCRATCH_MNT/v1
keyctl add logon fscrypt:$TEST_KEY_DESCRIPTOR "$TEST_RAW_KEY" @s >/dev/null
_set_encpolicy $SCRATCH_MNT/ks $TEST_KEY_DESCRIPTOR
touch $SCRATCH_MNT/ks/file
keyctl show | sed 1d | sed 's/^ *[0-9]* //' | tail -n 1
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" -d $TEST_KEY_DESCRIPTOR
_set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_get_encpolicy $SCRATCH_MNT/v1 | _filter_scratch
mkdir $SCRATCH_MNT/v1/sub
echo one > $SCRATCH_MNT/v1/sub/file
ls $SCRATCH_MNT/v1/sub
echo 2 > /proc/sys/vm/drop_caches
ls $SCRATCH_MNT/v1/sub
_rm_enckey $SCRATCH_MNT $TEST_KEY_DESCRIPTOR
echo "plaintext names after removal: $(ls $SCRATCH_MNT/v1/sub | grep -c '^file$')"
echo 3 > /proc/sys/vm/drop_caches
echo "plaintext names after drop_caches: $(ls $SCRATCH_MNT/v1/sub 2>/dev/null | grep -c '^file$')"
