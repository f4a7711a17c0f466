# The multi-user rules of FS_IOC_ADD_ENCRYPTION_KEY and
# FS_IOC_REMOVE_ENCRYPTION_KEY: two users add the same key; one user's
# removal only drops its claim; a user who never added it gets ENOKEY;
# root removes it for all users.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/dir
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY"
_user_do "echo -ne '$TEST_RAW_KEY' | xfs_io -c add_enckey $SCRATCH_MNT"
_enckey_status $SCRATCH_MNT $TEST_KEY_IDENTIFIER
_user_do "xfs_io -c 'enckey_status $TEST_KEY_IDENTIFIER' $SCRATCH_MNT"
su fsgqa2 -c "xfs_io -c 'rm_enckey $TEST_KEY_IDENTIFIER' $SCRATCH_MNT"
echo "status $?"
_user_do "xfs_io -c 'rm_enckey $TEST_KEY_IDENTIFIER' $SCRATCH_MNT"
_enckey_status $SCRATCH_MNT $TEST_KEY_IDENTIFIER
_user_do "xfs_io -c 'rm_enckey -a $TEST_KEY_IDENTIFIER' $SCRATCH_MNT"
_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER -a
_enckey_status $SCRATCH_MNT $TEST_KEY_IDENTIFIER
