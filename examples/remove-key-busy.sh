# User report: removing a key while a file is open is incomplete; the key's
# status says so until the file is closed, and a second removal finishes.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/dir
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY"
_set_encpolicy $SCRATCH_MNT/dir $TEST_KEY_IDENTIFIER
echo secret > $SCRATCH_MNT/dir/file
exec 3<$SCRATCH_MNT/dir/file
_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER
_enckey_status $SCRATCH_MNT $TEST_KEY_IDENTIFIER
cat $SCRATCH_MNT/dir/file
exec 3<&-
_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER
_enckey_status $SCRATCH_MNT $TEST_KEY_IDENTIFIER
echo "names without the key: $(ls $SCRATCH_MNT/dir | wc -l), plaintext visible: $(ls $SCRATCH_MNT/dir | grep -c '^file$')"
