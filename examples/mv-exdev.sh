# User report: rename(2) of an unencrypted file into an encrypted directory
# fails with EXDEV (the policies differ), so coreutils mv copies the file
# and unlinks the source.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/plain $SCRATCH_MNT/enc
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY"
_set_encpolicy $SCRATCH_MNT/enc $TEST_KEY_IDENTIFIER
echo "moved data" > $SCRATCH_MNT/plain/file
stat -c '%i' $SCRATCH_MNT/plain/file > /tmp/ino.before
trace on
mv $SCRATCH_MNT/plain/file $SCRATCH_MNT/enc/file 2>&1 | grep -E '^renameat2|^open|^unlink'
trace off
echo "mv: $?"
ls $SCRATCH_MNT/plain | wc -l
cat $SCRATCH_MNT/enc/file
if [ "$(stat -c %i $SCRATCH_MNT/enc/file)" = "$(cat /tmp/ino.before)" ]; then
	echo "same inode: renamed"
else
	echo "new inode: copied"
fi
