# The fscrypt-provisioning key type (fs/crypto/keyring.c): a keyring key
# whose payload (struct fscrypt_provisioning_key_payload: __u32 type,
# __u32 reserved, raw[16..64]) FS_IOC_ADD_ENCRYPTION_KEY adds by key_id
# (get_keyring_key); the payload's type must be the key specifier's
# (EKEYREJECTED, as for any other key type), bad payloads are EINVAL,
# and the key cannot be read back (no ->read: EOPNOTSUPP).
provision() { # DESC TYPE RAW: the key's serial
	local t=$(printf '\\x%02x\\x00\\x00\\x00' $2)
	echo -n -e "${t}\x00\x00\x00\x00$3" | keyctl padd fscrypt-provisioning "$1" $ring
}
ring=$(keyctl newring provisioning-test @s)
_scratch_mkfs_encrypted >/dev/null
_scratch_mount
xfs_io -c "add_enckey -k 12345" $SCRATCH_MNT
for v in 1 2; do
	if [ $v = 1 ]; then spec=$TEST_KEY_DESCRIPTOR; opt="-d $TEST_KEY_DESCRIPTOR"; else spec=$TEST_KEY_IDENTIFIER; opt=""; fi
	_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" $opt
	mkdir $SCRATCH_MNT/dir
	_set_encpolicy $SCRATCH_MNT/dir $spec
	echo contents > $SCRATCH_MNT/dir/file
	_rm_enckey $SCRATCH_MNT $spec
	key=$(provision $spec $v "$TEST_RAW_KEY")
	xfs_io -c "add_enckey -k $key $opt" $SCRATCH_MNT
	cat $SCRATCH_MNT/dir/file
	grep " fscrypt-p $spec: " /proc/keys | awk '{print $2, $5, $6, $7, $8, $9, $10, $11}'
	rm -rf $SCRATCH_MNT/dir
	_scratch_cycle_mount
done
for t in 0 3 256; do
	provision bad $t "$TEST_RAW_KEY"
done
provision short 1 "\x01\x02\x03"
provision long 1 "$TEST_RAW_KEY$TEST_RAW_KEY"
key=$(provision v1 1 "$TEST_RAW_KEY")
keyctl read $key
keyctl print $key
xfs_io -c "add_enckey -k $key" $SCRATCH_MNT
key=$(provision v2 2 "$TEST_RAW_KEY")
xfs_io -c "add_enckey -k $key -d $TEST_KEY_DESCRIPTOR" $SCRATCH_MNT
keyctl revoke $key
xfs_io -c "add_enckey -k $key" $SCRATCH_MNT
key=$(echo -n "0123456789abcdef" | keyctl padd logon fscrypt:0011223344556677 $ring)
xfs_io -c "add_enckey -k $key" $SCRATCH_MNT
keyctl unlink $ring @s
_scratch_unmount
