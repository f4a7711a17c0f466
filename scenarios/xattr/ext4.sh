# vfslab sh --fs ext4
# kernel: 6.12
# Extended attributes on ext4: the namespaces' rules (fs/xattr.c
# xattr_permission), the name and size limits, XATTR_CREATE/REPLACE
# through removal, in-inode attributes spilling into the xattr block,
# ENOSPC when neither has room, and what getfattr lists.
_scratch_mkfs
_scratch_mount
cd $SCRATCH_MNT
touch f; mkdir d; ln -s f lnk; mkfifo p
setfattr -n user.a -v 1 f; echo "set user.a: $?"
setfattr -n user.empty f; echo "set empty: $?"
setfattr -n trusted.t -v tv f; echo "set trusted: $?"
setfattr -n security.s -v sv f; echo "set security: $?"
setfattr -n gnu.hurd -v h f; echo "set gnu: $?"
setfattr -n foo.bar -v 1 f; echo "set foo.bar: $?"
setfattr -n user. -v 1 f; echo "set bare prefix: $?"
setfattr -n "user.$(printf '%0250d' 0)" -v long f; echo "set 255-byte name: $?"
setfattr -n "user.$(printf '%0251d' 0)" -v long f; echo "set 256-byte name: $?"
getfattr -d -m - f
getfattr -n user.nope f; echo "get missing: $?"
setfattr -x user.nope f; echo "remove missing: $?"
setfattr -x user.a f; echo "remove: $?"
getfattr -n user.a f; echo "get removed: $?"
setfattr -h -n user.l -v 1 lnk; echo "user on symlink: $?"
setfattr -h -n trusted.l -v 1 lnk; echo "trusted on symlink: $?"
getfattr -h -d -m - lnk
setfattr -n user.p -v 1 p; echo "user on fifo: $?"
getfattr -n user.p p; echo "get user on fifo: $?"
setfattr -n user.dir -v dv d; getfattr -d d
chmod 1777 d
su fsgqa -c "setfattr -n user.x -v 1 $SCRATCH_MNT/d"; echo "sticky dir, other user: $?"
su fsgqa -c "setfattr -n trusted.x -v 1 $SCRATCH_MNT/f"; echo "trusted as user: $?"
su fsgqa -c "getfattr -n trusted.t $SCRATCH_MNT/f"; echo "get trusted as user: $?"
su fsgqa -c "getfattr -d -m - $SCRATCH_MNT/f"
su fsgqa -c "setfattr -n user.x -v 1 $SCRATCH_MNT/f"; echo "user on another's file: $?"
touch many
for i in 1 2 3 4 5 6 7 8 9 10; do setfattr -n user.attr$i -v "value number $i is long enough to spill" many || echo "fail $i"; done
setfattr -x user.attr3 many; setfattr -n user.attr1 -v short many
getfattr -d many
touch big
setfattr -n user.big -v "$(printf '%05000d' 0)" big; echo "5000 bytes: $?"
setfattr -n user.big -v "$(printf '%03900d' 0)" big; echo "3900 bytes: $?"
getfattr -n user.big --only-values big | wc -c
setfattr -n user.huge -v "$(printf '%065537d' 0)" big; echo "65537 bytes: $?"
cd /
_scratch_cycle_mount
getfattr -d $SCRATCH_MNT/many
getfattr -n user.big --only-values $SCRATCH_MNT/big | wc -c
