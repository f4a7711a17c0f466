# util-linux 2.38's mount messages (with the dmesg hint after a failed
# mount(2)) and the kernel's log of mounts, unmounts and drop_caches.
# vfslab sh --fs ext4
# kernel: 6.12
_scratch_mkfs >/dev/null
_scratch_mount
_scratch_mount
echo "status $?"
mount $SCRATCH_DEV /mnt/nosuch
echo "status $?"
echo 2 > /proc/sys/vm/drop_caches
_scratch_unmount
