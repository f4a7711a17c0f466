# mkfs.f2fs refuses a device that holds a filesystem unless -f
# (f2fs-tools 1.15: the refusal on standard output, status 255) and accepts
# -O extra_attr.
# vfslab sh --fs ext4
_scratch_mkfs >/dev/null
mkfs.f2fs -O encrypt $SCRATCH_DEV
echo "status $?"
mkfs.f2fs -f -O extra_attr,encrypt $SCRATCH_DEV >/dev/null
echo "status $?"
mount $SCRATCH_DEV $SCRATCH_MNT
grep -c "$SCRATCH_MNT f2fs" /proc/mounts
_scratch_unmount
