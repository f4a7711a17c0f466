# vfslab sh --fs ext4
# kernel: 6.12
# Special files on ext4 (ext4_mknod, init_special_inode): FIFOs, sockets'
# absence of an open, character and block device numbers in both of
# i_block's encodings, kept across a mount cycle; a device node opens the
# driver of its number (drivers/char/mem.c) wherever it lives, and a
# number no driver has is ENXIO.
_scratch_mkfs
_scratch_mount
cd $SCRATCH_MNT
mkfifo fifo; echo "mkfifo: $?"
mknod null c 1 3; mknod zero c 1 5; mknod full c 1 7
mknod big c 300 70000; mknod blk b 7 200; mknod nodrv c 42 42
stat -c '%n %F %t %T %a %s %b' fifo null zero big blk nodrv
echo data > null; echo "write null: $?"
dd if=zero bs=4 count=1 status=none | od -An -tx1
dd if=null bs=4 count=1 status=none | wc -c
dd if=zero of=full bs=1 count=1 status=none; echo "write full: $?"
cat nodrv; echo "open nodrv: $?"
mknod fifo2 p; echo "mknod p: $?"
mknod bad x 1 1; echo "mknod bad type: $?"
su fsgqa -c "mknod $SCRATCH_MNT/c2 c 1 3"; echo "mknod as user: $?"
su fsgqa -c "mkfifo $SCRATCH_MNT/f3"; echo "mkfifo as user (no write permission): $?"
(cat fifo; echo "reader done") &
echo "through the fifo" > fifo
wait
cd /
_scratch_cycle_mount
cd $SCRATCH_MNT
stat -c '%n %F %t %T %a' fifo null zero big blk
dd if=zero bs=2 count=1 status=none | od -An -tx1
setfattr -n trusted.t -v 1 fifo; getfattr -d -m - fifo
rm fifo fifo2 null zero full big blk nodrv
