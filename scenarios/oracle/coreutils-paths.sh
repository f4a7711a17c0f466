# coreutils 9.1 on paths: readlink -e/-f/-m canonicalize (symlinks
# followed, the names as spelled, what must exist), mv refuses two names
# of one file and a move into itself, lsattr -l's long names, and the
# C locale's quoting of a non-ASCII name; on a casefolded ext4 directory
# as xfstests' generic/556 uses them.
# vfslab sh --fs ext4
mkfs.ext4 -q -F -O casefold $SCRATCH_DEV
_scratch_mount
cd $SCRATCH_MNT
mkdir c d; chattr +F c
touch c/target f; ln f g
ln -s $SCRATCH_MNT/c/TARGET l1; ln -s l1 l2; ln -s d/../f l3; ln -s nosuch l4; ln -s loop loop
readlink -e l1 l2 l3 | _filter_scratch
readlink -e l4; echo "readlink -e missing: $?"
readlink -f l4 | _filter_scratch
readlink -f nosuch/x; echo "readlink -f missing parent: $?"
readlink -m l4/x/../y | _filter_scratch
readlink -e f/x; echo "readlink -e through a file: $?"
readlink -ev loop 2>&1 | _filter_scratch
readlink -n -f l3 l1 2>&1 | _filter_scratch
readlink -f / .. | _filter_scratch
mv c/target c/TARGET 2>&1 | _filter_scratch
mv f g 2>&1 | _filter_scratch
mv f f 2>&1 | _filter_scratch
mv d d 2>&1 | _filter_scratch
mv nosuch x 2>&1 | _filter_scratch
ls c f g
lsattr -ld c d f | _filter_scratch
stat "$(printf 'ma\303\261ana')" 2>&1
cat 'x y' 2>&1
cd /; _scratch_unmount
