# Seed 000 (fscrypt-fname-onstack): encrypting a name for a lookup in an
# encrypted directory kmallocs a skcipher request in the base variant and
# frees it; v2 as posted declares an on-stack request but still kmallocs
# one, and never frees it (kmalloc without its kfree); upstream puts it on
# the stack.
scenario() {
	_scratch_mkfs_encrypted
	_scratch_mount
	mkdir $SCRATCH_MNT/enc
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	_set_encpolicy $SCRATCH_MNT/enc $TEST_KEY_IDENTIFIER
	touch $SCRATCH_MNT/enc/file
	sync
	echo 2 > /proc/sys/vm/drop_caches
	events reset
	stat -c %s $SCRATCH_MNT/enc/file
	events | grep -E '^kmalloc|^kfree|skcipher'
}
for v in base v2 upstream; do
	echo "== fscrypt-fname-onstack=$v"
	patches fscrypt-fname-onstack=$v
	scenario
	_scratch_unmount
done
