# mke2fs sizes the filesystem from the device (misc/mke2fs.c with
# mke2fs.conf's [fs_types]): under 512 MiB the "small" type's 1 KiB blocks
# and an inode per 4 KiB, else 4 KiB blocks and an inode per 16 KiB; -b and
# -N override them. The superblock at byte 1024 holds s_inodes_count
# (offset 0), s_blocks_count_lo (4) and s_log_block_size (24). /dev/vdb
# is a 256 MiB disk, /dev/vdc the default 8 GiB one; a file system with
# few inodes runs out of them (ENOSPC) with blocks to spare.
# vfslab sh --device vdb:256M
sb() {
	echo $(for off in 0 4 24; do
		dd if=$1 bs=4 skip=$((256 + off / 4)) count=1 status=none | od -An -tu4
	done)
}
mkfs.ext4 -q -F /dev/vdb; sb /dev/vdb
mkfs.ext4 -q -F -b 4096 /dev/vdb; sb /dev/vdb
mkfs.ext4 -q -F /dev/vdc; sb /dev/vdc
mkfs.ext4 -q -F -b 1024 /dev/vdc; sb /dev/vdc
mkfs.ext4 -q -F -N 100 /dev/vdb; sb /dev/vdb
mount /dev/vdb /mnt/scratch
i=0
while touch /mnt/scratch/f$i 2>/dev/null; do i=$((i + 1)); done
echo "$i files, then: $(touch /mnt/scratch/g 2>&1)"
umount /mnt/scratch
