# vfslab sh --fs ext4
# kernel: 6.12
# Bind mounts (do_loopback) with a per-mount read-only flag
# (do_reconfigure_mnt): EROFS through the read-only bind while the
# superblock and the first mount stay writable, /proc/mounts, a busy
# umount, and umount of the bind and of the first mount in either order.
_scratch_mkfs_encrypted
_scratch_mount
mkdir $SCRATCH_MNT/ro_dir $SCRATCH_MNT/ro_bind_mnt $SCRATCH_MNT/sub
echo hello > $SCRATCH_MNT/sub/file
mount --bind $SCRATCH_MNT $SCRATCH_MNT/ro_bind_mnt; echo "bind: $?"
mount -o remount,ro,bind $SCRATCH_MNT/ro_bind_mnt; echo "remount ro,bind: $?"
grep " $SCRATCH_MNT" /proc/mounts | sed "s|$SCRATCH_DEV|DEV|; s|$SCRATCH_MNT|MNT|" | awk '{print $1, $2, $3, $4}'
_set_encpolicy $SCRATCH_MNT/ro_bind_mnt/ro_dir 2>&1 | sed "s|$SCRATCH_MNT|SCRATCH_MNT|"
touch $SCRATCH_MNT/ro_bind_mnt/new 2>&1 | sed "s|$SCRATCH_MNT|SCRATCH_MNT|"
mkdir $SCRATCH_MNT/ro_bind_mnt/newdir 2>&1 | sed "s|$SCRATCH_MNT|SCRATCH_MNT|"
setfattr -n user.x -v 1 $SCRATCH_MNT/ro_bind_mnt/sub/file 2>&1 | sed "s|$SCRATCH_MNT|SCRATCH_MNT|"
cat $SCRATCH_MNT/ro_bind_mnt/sub/file
touch $SCRATCH_MNT/new; echo "touch through the first mount: $?"
ls $SCRATCH_MNT/ro_bind_mnt/new && echo "seen through the bind"
mount -o remount,rw,bind $SCRATCH_MNT/ro_bind_mnt; echo "remount rw,bind: $?"
touch $SCRATCH_MNT/ro_bind_mnt/new2; echo "touch after rw: $?"
umount $SCRATCH_MNT/ro_bind_mnt; echo "umount bind: $?"
grep -c " $SCRATCH_MNT" /proc/mounts
mkdir /mnt/test/b 2>/dev/null
mount --bind $SCRATCH_MNT/sub /mnt/test/b; echo "bind sub: $?"
cat /mnt/test/b/file
exec 3< /mnt/test/b/file
umount /mnt/test/b 2>&1; echo "umount busy: $?"
exec 3<&-
umount $SCRATCH_MNT; echo "umount the first mount under a bind: $?"
cat /mnt/test/b/file
umount /mnt/test/b; echo "umount last: $?"
grep -c " $SCRATCH_MNT\| /mnt/test/b" /proc/mounts
