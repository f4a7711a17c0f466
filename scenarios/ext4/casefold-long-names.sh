# Names that fold alike in a casefolded ext4 directory, short and at
# NAME_MAX (255 bytes). ext4_fname_setup_ci_filename cannot fold a
# 255-byte name into its EXT4_NAME_LEN buffer either, but ext4_match
# still compares it case-insensitively (utf8_strncasecmp), so both
# spellings stay one entry, unlike f2fs
# (scenarios/f2fs/casefold-long-names.sh).
# vfslab sh --fs ext4
mkfs.ext4 -q -F -O casefold $SCRATCH_DEV
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
