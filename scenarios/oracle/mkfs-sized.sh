# mke2fs's fs-size operand (blocks of -b, or K/M/G suffixed; misc/mke2fs.c
# PRS) and mkfs.f2fs's sector count (f2fs_parse_options'
# wanted_total_sectors, lib/libf2fs.c f2fs_get_device_info) make a
# filesystem smaller than its 256 MiB disk, as xfstests'
# _scratch_mkfs_sized does, and it fills at its own size: xfs_io's pwrite
# ends at the short write with no error (io/pwrite.c write_buffer), ext4
# keeps 2% of its blocks free (ext4_calculate_resv_clusters,
# ext4_has_free_clusters), and statfs (ext4_statfs, f2fs_statfs) reports
# what is left. A value never counts as the device (-U, -L), -b must be
# a power of two, and -L lands in s_volume_name (offset 120). The free
# counts of a fresh ext4 are not printed: mke2fs's resize_inode
# (docs/LINUX-DIFFERENCES.md).
# vfslab sh --device vdb:256M
u32() { dd if=/dev/vdb bs=4 skip=$1 count=$2 status=none | od -An -tu${3:-4} | tr -d ' '; }
fill() {
	mount /dev/vdb /mnt/scratch
	$1 stat -f -c 'statfs: blocks %b free %f avail %a files %c ffree %d' /mnt/scratch
	xfs_io -f -c "pwrite -b 1m 0 100m" /mnt/scratch/f | sed -n 's|^wrote [0-9]*/|wrote N/|p'
	stat -f -c 'full: free %f avail %a files %c' /mnt/scratch
	umount /mnt/scratch
}
mkfs.ext4 -q -F -b 4096 -U 5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d -L lab /dev/vdb 16384
echo "ext4 blocks $(u32 257 1) log $(u32 262 1) label $(dd if=/dev/vdb bs=1 skip=1144 count=3 status=none)"
fill :
mkfs.ext4 -q -F /dev/vdb 32M
echo "ext4 32M: blocks $(u32 257 1) log $(u32 262 1)"
mkfs.ext4 -q -F -b 1000 /dev/vdb
echo "-b 1000: $?"
mkfs.f2fs -q -f -O encrypt /dev/vdb 131072 >/dev/null
echo "f2fs blocks $(u32 265 2 8)"
fill
mkfs.f2fs -q -f /dev/vdb 1048576 >/dev/null
echo "f2fs over the disk: blocks $(u32 265 2 8)"
