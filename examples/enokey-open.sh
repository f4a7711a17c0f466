# User report: opening a locked file (by its no-key name) fails with
# ENOKEY, as on Linux: `cat: ...: Required key not available`, status 1.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/d
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY"
_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER
echo hello > $SCRATCH_MNT/d/f
cat $SCRATCH_MNT/d/f
_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER
# The no-key name comes from the file's nonce, which the seed fixes.
for f in $SCRATCH_MNT/d/*; do
	cat $f
done
cat $SCRATCH_MNT/d/f
echo "status $?"
echo more > $SCRATCH_MNT/d/new
echo "status $?"
