# IV_INO_LBLK_64 and IV_INO_LBLK_32 contents keys are derived with the
# filesystem's UUID (fs/crypto/keysetup.c setup_per_mode_enc_key: HKDF
# info mode_num || sb->s_uuid), which ext4_fill_super and f2fs_fill_super
# copy from the on-disk superblock; the IV is the block number with the
# inode number (fscrypt_generate_iv: lblk | ino << 32, or the siphash of
# the inode number plus lblk). The ciphertext on disk is read at the
# extent fiemap reports. A 64 MiB disk has one ext4 block group, so the
# inode numbers are the same on both sides; only digests are printed.
# vfslab sh --device vdb:64M
uuid=5d9c3b2a-4e1f-4a6b-9c8d-7e6f5a4b3c2d
one() { # FS FLAGS
	case $1 in
	ext4) mkfs.ext4 -q -F -b 4096 -U $uuid -O encrypt,stable_inodes $SCRATCH_DEV ;;
	f2fs) mkfs.f2fs -q -f -U $uuid -O encrypt $SCRATCH_DEV >/dev/null ;;
	esac
	_scratch_mount -t $1
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
	mkdir $SCRATCH_MNT/d
	_set_encpolicy $SCRATCH_MNT/d $TEST_KEY_IDENTIFIER -f $2
	head -c 8192 /dev/zero > $SCRATCH_MNT/d/zero
	sync
	off=$(xfs_io -c fiemap $SCRATCH_MNT/d/zero | sed -n 's/^[[:space:]]*0: \[0\.\.15\]: *\([0-9]*\)\.\..*/\1/p')
	_scratch_unmount
	echo "$1 flags $2: $(dd if=$SCRATCH_DEV bs=512 skip=$off count=16 2>/dev/null | md5sum | cut -d' ' -f1)"
}
for fs in ext4 f2fs; do
	one $fs 0x8
	one $fs 0x10
done
