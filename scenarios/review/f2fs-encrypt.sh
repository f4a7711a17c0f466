# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: f2fs+encrypt; run it with vfslab sh --seed 1000508 FILE
mkfs.f2fs -f -O encrypt $SCRATCH_DEV >/dev/null
mount -o lookup_mode=auto $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null || mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $D $TEST_KEY_IDENTIFIER
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x5a 0 14192" "$D"/'mañana' >/dev/null; observe
md5sum "$D"/'mañana' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
mv -T "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN' "$D"/'beta'; observe
ls -a $D; observe
touch "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
touch "$D"/'sub/mañana'; observe
mkdir "$D"/'SUB'; observe
md5sum "$D"/'beta'; observe
xfs_io -f -c "pwrite -S 0x46 6000 29291" "$D"/'beta' >/dev/null; observe
xfs_io -f -c "pwrite -S 0x56 3000 80484" "$D"/'Alpha' >/dev/null; observe
xfs_io -f -c "pwrite -S 0x53 6000 57533" "$D"/'alpha' >/dev/null; observe
ls -a $D; observe
xfs_io -f -c "pwrite -S 0x4c 0 35570" "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >/dev/null; observe
md5sum "$D"/'beta' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
echo 2 > /proc/sys/vm/drop_caches; observe
_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER; observe
echo 2 > /proc/sys/vm/drop_caches; observe
stat -c '%F %h %s' "$D"/'mañana'; observe
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null; observe
xfs_io -f -c "pwrite -S 0x4c 3000 80724" "$D"/'sub' >/dev/null; observe
xfs_io -f -c "pwrite -S 0x43 6000 53228" "$D"/'sub/beta' >/dev/null; observe
echo 2 > /proc/sys/vm/drop_caches; observe
rm "$D"/'sub'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
