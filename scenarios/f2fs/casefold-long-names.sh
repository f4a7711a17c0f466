# Names that fold alike in a casefolded f2fs directory, short and at
# NAME_MAX (255 bytes). f2fs_init_casefolded_name folds into a 255-byte
# buffer, which a 255-byte folded name and its NUL do not fit: the name
# is kept unfolded, hashed raw, and f2fs_match_name compares an unfolded
# name exactly, so the second spelling gets an entry of its own (while
# the dcache, which folds without that limit, answers stat of either
# with the inode it holds). Linux 6.12 does this; ext4 does not
# (scenarios/ext4/casefold-long-names.sh).
# vfslab sh --fs f2fs
mkfs.f2fs -f -O casefold -C utf8 $SCRATCH_DEV >/dev/null
_scratch_mount
mkdir $SCRATCH_MNT/c; chattr +F $SCRATCH_MNT/c
a=$(head -c 255 /dev/zero | tr '\0' N); b=$(head -c 254 /dev/zero | tr '\0' n)N
touch $SCRATCH_MNT/c/$a; touch $SCRATCH_MNT/c/$b
ls $SCRATCH_MNT/c | wc -l
stat -c '%i %h' $SCRATCH_MNT/c/$a $SCRATCH_MNT/c/$b | uniq | wc -l
c=$(head -c 200 /dev/zero | tr '\0' N); d=$(head -c 199 /dev/zero | tr '\0' n)N
touch $SCRATCH_MNT/c/$c; touch $SCRATCH_MNT/c/$d
ls $SCRATCH_MNT/c | wc -l
echo 2 > /proc/sys/vm/drop_caches
touch $SCRATCH_MNT/c/$b
ls $SCRATCH_MNT/c | wc -l
_scratch_unmount
