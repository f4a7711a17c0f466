# A sample of vfslab review's generated sequences, compared with Linux by
# vfslab linux diff; go test ./review -run TestCorpusScripts -update-corpus
# writes it again.
# vfslab review reproducer: f2fs+encrypt+v1; run it with vfslab sh --seed 1000609 FILE
mkfs.f2fs -f -O encrypt $SCRATCH_DEV >/dev/null
mount -o lookup_mode=auto $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null || mount $SCRATCH_DEV $SCRATCH_MNT
D=$SCRATCH_MNT/d
mkdir $D
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" -d $TEST_KEY_DESCRIPTOR >/dev/null
_set_encpolicy $D $TEST_KEY_DESCRIPTOR
observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }
observe
mkdir "$D"/'sub'; observe
xfs_io -f -c "pwrite -S 0x50 0 12451" "$D"/'ALPHA' >/dev/null; observe
md5sum "$D"/'ALPHA' # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio); observe
md5sum "$D"/'sub/Straße'; observe
touch "$D"/'sub/NNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNNN'; observe
xfs_io -f -c "pwrite -S 0x4b 3000 40477" "$D"/'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' >/dev/null; observe
xfs_io -f -c "pwrite -S 0x59 0 69008" "$D"/'sub/SUB' >/dev/null; observe
touch "$D"/'sub/mañana'; observe
stat -c '%F %h %s' "$D"/'sub/Straße'; observe
touch "$D"/'llllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllllONG'; observe
ls -a "$D"/'sub'; observe
ls -a "$D"/'sub'; observe
echo 2 > /proc/sys/vm/drop_caches; observe
mkdir "$D"/'sub/mañana'; observe
md5sum "$D"/'beta'; observe
xfs_io -f -c "pwrite -S 0x42 6000 42335" "$D"/'mañana' >/dev/null; observe
echo 2 > /proc/sys/vm/drop_caches; observe
touch "$D"/'sub/SUB'; observe
touch "$D"/'LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLong'; observe
xfs_io -f -c "pwrite -S 0x5a 6000 73104" "$D"/'sub/nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnN' >/dev/null; observe
echo 2 > /proc/sys/vm/drop_caches; observe
echo 2 > /proc/sys/vm/drop_caches; observe
rmdir "$D"/'alpha'; observe
rmdir "$D"/'beta'; observe
dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true
