# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: ext4+encrypt+v1; run it with vfslab sh --seed 1000205 FILE
mkfs.ext4 -q -F -O encrypt $SCRATCH_DEV >/dev/null
mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" -d $TEST_KEY_DESCRIPTOR >/dev/null
_set_encpolicy $D $TEST_KEY_DESCRIPTOR
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x46 0 16308" "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >/dev/null; observe
md5sum "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
xfs_io -f -c "pwrite -S 0x44 3000 5494" "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG' >/dev/null; observe
ls -a $D; observe
echo 2 > /proc/sys/vm/drop_caches; observe
stat -c '%F %h %s' "$D"/'STRASSE'; observe
stat -c '%F %h %s' "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
stat -c '%F %h %s' "$D"/'SUB'; observe
xfs_io -f -c "pwrite -S 0x52 3000 50821" "$D"/'beta' >/dev/null; observe
echo 2 > /proc/sys/vm/drop_caches; observe
mv -T "$D"/'sub/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN' "$D"/'ALPHA'; observe
md5sum "$D"/'mañana'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
md5sum "$D"/'Straße'; observe
stat -c '%F %h %s' "$D"/'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
xfs_io -f -c "pwrite -S 0x50 6000 69806" "$D"/'sub' >/dev/null; observe
touch "$D"/'sub/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN'; observe
xfs_io -f -c "pwrite -S 0x4f 6000 56125" "$D"/'sub' >/dev/null; observe
md5sum "$D"/'sub/sub'; observe
touch "$D"/'sub/Straße'; observe
touch "$D"/'beta'; observe
md5sum "$D"/'mañana' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
rm "$D"/'mañana'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
