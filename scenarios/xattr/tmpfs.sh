# vfslab sh
# kernel: 6.12
# Extended attributes on the root's tmpfs-like /tmp (mm/shmem.c with
# CONFIG_TMPFS_XATTR): security., trusted. and user. kept in memory,
# listed in name order, trusted. hidden from a user without
# CAP_SYS_ADMIN.
cd /tmp
touch f
setfattr -n user.zz -v 1 f
setfattr -n user.aa -v 2 f
setfattr -n trusted.t -v 3 f
setfattr -n security.s -v 4 f
getfattr -d -m - f
su fsgqa -c "getfattr -d -m - /tmp/f"
setfattr -n user.aa -v 0x00ff f; getfattr -n user.aa f
setfattr -n user.aa -v 0sAP8= f; getfattr -e hex -n user.aa f
setfattr -x user.zz f; getfattr -d f
setfattr -n foo.x -v 1 f; echo "set foo.x: $?"
rm f
