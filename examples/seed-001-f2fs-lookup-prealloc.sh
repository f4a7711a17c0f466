# Seed 001 (f2fs-lookup-prealloc): a lookup in an encrypted, casefolded
# f2fs directory compares names through generic_ci_match, which kmallocs a
# buffer per compared dentry in the base variant. v2 (as posted) threads a
# preallocated buffer through the lookup but its inverted resize check
# reallocates it anyway, with larger buffers; v4 keeps one buffer per
# lookup. Eight names, one hit and one miss (the miss compares them all).
# The mount is lookup_mode=auto, which is what the seed's 6.16 kernel did
# (it had no option): fall back to the linear search after a hashed miss.
# Upstream's default since 632f0b6c3e32 is perf, whose misses never fall
# back, so that they compare no name at all.
for v in base v2 v4; do
	echo "== f2fs-lookup-prealloc=$v"
	patches f2fs-lookup-prealloc=$v
	mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null
	# Linux 6.12 has no lookup_mode (its lookups are auto's); a kernel
	# without the option refuses it, and the default mount does the same.
	_scratch_mount -o lookup_mode=auto 2>/dev/null || _scratch_mount
	mkdir $SCRATCH_MNT/d
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER
	chattr +F $SCRATCH_MNT/d
	lsattr -d $SCRATCH_MNT/d | _filter_scratch
	for i in 1 2 3 4 5 6 7 8; do touch $SCRATCH_MNT/d/File$i; done
	sync
	echo 2 > /proc/sys/vm/drop_caches
	events reset
	stat -c %n $SCRATCH_MNT/d/FILE8 $SCRATCH_MNT/d/nosuch 2>&1 | _filter_scratch
	events | grep -E '^kmalloc|^kfree'
	_scratch_unmount
done
