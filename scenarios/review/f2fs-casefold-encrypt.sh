# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: f2fs+casefold+encrypt; run it with vfslab sh --seed 1000710 FILE
mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null
mount -o lookup_mode=auto $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null || mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
chattr +F $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $D $TEST_KEY_IDENTIFIER
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x49 0 13601" "$D"/'SUB' >/dev/null; observe
md5sum "$D"/'SUB' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
echo 2 > /proc/sys/vm/drop_caches; observe
xfs_io -f -c "pwrite -S 0x53 0 21196" "$D"/'SUB' >/dev/null; observe
echo 2 > /proc/sys/vm/drop_caches; observe
xfs_io -f -c "pwrite -S 0x4d 6000 9887" "$D"/'sub/SUB' >/dev/null; observe
rmdir "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'; observe
touch "$D"/'sub/beta'; observe
md5sum "$D"/'SUB'; observe
stat -c '%F %h %s' "$D"/'sub/SUB'; observe
md5sum "$D"/'SUB' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
md5sum "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
ls -a $D; observe
ln "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong' "$D"/'mañana'; observe
stat -c '%F %h %s' "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; observe
rm "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
stat -c '%F %h %s' "$D"/'sub/LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
ls -a "$D"/'sub'; observe
stat -c '%F %h %s' "$D"/'sub/STRASSE'; observe
touch "$D"/'sub/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
stat -c '%F %h %s' "$D"/'sub'; observe
md5sum "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
