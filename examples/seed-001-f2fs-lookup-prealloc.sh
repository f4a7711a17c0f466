# Seed 001 (f2fs-lookup-prealloc): a lookup in an encrypted, casefolded
# f2fs directory compares names through generic_ci_match, which kmallocs a
# buffer per compared dentry in the base variant and reuses one in v2/v4.
scenario() {
	mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null
	_scratch_mount
	mkdir $SCRATCH_MNT/d
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER
	chattr +F $SCRATCH_MNT/d
	touch $SCRATCH_MNT/d/File
	lsattr -d $SCRATCH_MNT/d | _filter_scratch
	echo 2 > /proc/sys/vm/drop_caches
	events reset
	stat -c %n $SCRATCH_MNT/d/FILE | _filter_scratch
	events | grep -E '^kmalloc|^kfree|ci_match|prealloc'
}
for v in base v2 v4; do
	echo "== f2fs-lookup-prealloc=$v"
	patches f2fs-lookup-prealloc=$v
	scenario
done
