# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: f2fs+casefold; run it with vfslab sh --seed 1000407 FILE
mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null
mount -o lookup_mode=auto $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null || mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
chattr +F $D
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x55 0 15130" "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG' >/dev/null; observe
md5sum "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
md5sum "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
xfs_io -f -c "pwrite -S 0x50 6000 79621" "$D"/'STRASSE' >/dev/null; observe
mkdir "$D"/'sub/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
md5sum "$D"/'STRASSE'; observe
stat -c '%F %h %s' "$D"/'Straße'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
rm "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
xfs_io -f -c "pwrite -S 0x51 0 83341" "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >/dev/null; observe
touch "$D"/'alpha'; observe
rm "$D"/'ALPHA'; observe
ls -a "$D"/'sub'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
rm "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; observe
touch "$D"/'beta'; observe
md5sum "$D"/'beta'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
xfs_io -f -c "pwrite -S 0x43 6000 57777" "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN' >/dev/null; observe
md5sum "$D"/'sub/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; observe
md5sum "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'; observe
stat -c '%F %h %s' "$D"/'alpha'; observe
ls -a $D; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
