# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: ext4; run it with vfslab sh --seed 1000003 FILE
mkfs.ext4 -q -F -O encrypt $SCRATCH_DEV >/dev/null
mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x46 0 15325" "$D"/'mañana' >/dev/null; observe
md5sum "$D"/'mañana'; observe
stat -c '%F %h %s' "$D"/'alpha'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
touch "$D"/'sub/alpha'; observe
md5sum "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
xfs_io -f -c "pwrite -S 0x4d 6000 16844" "$D"/'sub/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >/dev/null; observe
touch "$D"/'sub/ALPHA'; observe
md5sum "$D"/'mañana'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
stat -c '%F %h %s' "$D"/'ALPHA'; observe
md5sum "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'; observe
xfs_io -f -c "pwrite -S 0x49 0 78126" "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN' >/dev/null; observe
mkdir "$D"/'STRASSE'; observe
ls -a $D; observe
touch "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
xfs_io -c "truncate 11900" "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
mv -T "$D"/'mañana' "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
md5sum "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; observe
ls -a $D; observe
mv -T "$D"/'SUB' "$D"/'Straße'; observe
stat -c '%F %h %s' "$D"/'sub/Straße'; observe
rm "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
