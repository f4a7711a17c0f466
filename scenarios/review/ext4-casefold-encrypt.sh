# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: ext4+casefold+encrypt; run it with vfslab sh --seed 1000306 FILE
mkfs.ext4 -q -F -O encrypt,casefold $SCRATCH_DEV >/dev/null
mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
chattr +F $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $D $TEST_KEY_IDENTIFIER
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x55 0 13303" "$D"/'alpha' >/dev/null; observe
md5sum "$D"/'alpha' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
xfs_io -c "truncate 17241" "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
xfs_io -f -c "pwrite -S 0x4b 0 15001" "$D"/'sub/STRASSE' >/dev/null; observe
touch "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
xfs_io -c "truncate 11401" "$D"/'sub/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
xfs_io -c "truncate 15302" "$D"/'NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'; observe
ls -a "$D"/'sub'; observe
mv -T "$D"/'sub/llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG' "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
touch "$D"/'sub/STRASSE'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
echo 2 > /proc/sys/vm/drop_caches; observe
touch "$D"/'alpha'; observe
xfs_io -c "truncate 8383" "$D"/'mañana'; observe
xfs_io -c "truncate 12778" "$D"/'Alpha'; observe
touch "$D"/'Straße'; observe
rm "$D"/'sub'; observe
ls -a "$D"/'sub'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
rmdir "$D"/'sub/LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
xfs_io -f -c "pwrite -S 0x54 6000 67022" "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG' >/dev/null; observe
touch "$D"/'mañana'; observe
md5sum "$D"/'ALPHA' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
