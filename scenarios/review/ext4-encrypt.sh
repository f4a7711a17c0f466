# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: ext4+encrypt; run it with vfslab sh --seed 1000104 FILE
mkfs.ext4 -q -F -O encrypt $SCRATCH_DEV >/dev/null
mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $D $TEST_KEY_IDENTIFIER
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x51 0 14444" "$D"/'beta' >/dev/null; observe
md5sum "$D"/'beta' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
xfs_io -f -c "pwrite -S 0x43 0 87503" "$D"/'sub/beta' >/dev/null; observe
xfs_io -f -c "pwrite -S 0x47 0 11340" "$D"/'sub/beta' >/dev/null; observe
md5sum "$D"/'Alpha'; observe
xfs_io -f -c "pwrite -S 0x4f 3000 59019" "$D"/'mañana' >/dev/null; observe
mv -T "$D"/'beta' "$D"/'SUB'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
ln "$D"/'Alpha' "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'; observe
xfs_io -f -c "pwrite -S 0x50 6000 52312" "$D"/'STRASSE' >/dev/null; observe
touch "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x42 6000 9353" "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong' >/dev/null; observe
stat -c '%F %h %s' "$D"/'SUB'; observe
touch "$D"/'sub/alpha'; observe
stat -c '%F %h %s' "$D"/'alpha'; observe
touch "$D"/'STRASSE'; observe
xfs_io -f -c "pwrite -S 0x47 0 45589" "$D"/'STRASSE' >/dev/null; observe
rm "$D"/'sub/LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
stat -c '%F %h %s' "$D"/'sub/LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
stat -c '%F %h %s' "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
xfs_io -f -c "pwrite -S 0x4f 0 16973" "$D"/'mañana' >/dev/null; observe
stat -c '%F %h %s' "$D"/'sub/Alpha'; observe
stat -c '%F %h %s' "$D"/'SUB'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
