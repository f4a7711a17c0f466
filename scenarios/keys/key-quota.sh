# The key quota (security/keys/key.c key_alloc, key_payload_reserve):
# every key is charged to its owner, one key and its description, a NUL
# and its payload in bytes, against /proc/sys/kernel/keys/maxkeys and
# maxbytes (root: root_maxkeys, root_maxbytes); past them add_key and
# FS_IOC_ADD_ENCRYPTION_KEY are EDQUOT. fscrypt charges each user's claim
# to a v2 key as a ".fscrypt" key "<identifier>.uid.<uid>" of 64 bytes
# (fs/crypto/keyring.c add_master_key_user), and gives it back when the
# key is removed or the filesystem unmounted. The sysctls take an integer
# from 1 (gc_delay from 0) and are root's to write.
ls /proc/sys/kernel/keys
for f in maxkeys maxbytes root_maxkeys root_maxbytes gc_delay persistent_keyring_expiry; do
	echo "$f $(cat /proc/sys/kernel/keys/$f)"
done
f=/proc/sys/kernel/keys/maxkeys
for v in 0 -1 abc 2147483648; do
	{ echo $v > $f; } 2>/dev/null
	echo "after $v: $(cat $f)"
done
_user_do "{ echo 5 > $f; } 2>/dev/null; cat $f"

_scratch_mkfs_encrypted >/dev/null
_scratch_mount
chmod 777 $SCRATCH_MNT
uid=$(id -u fsgqa)
quota() { # what fsgqa's line of /proc/key-users says: qnkeys qnbytes
	sed -n "s|^ *$uid: *[0-9]* [0-9/]* \([0-9]*\)/[0-9]* \([0-9]*\)/.*|\1 \2|p" /proc/key-users
}
set -- $(quota) 0 0
keys0=$1 bytes0=$2
echo $((keys0 + 3)) > $f
for i in 1 2 3 4; do
	_user_do_add_enckey $SCRATCH_MNT "$(_generate_raw_encryption_key)" | sed 's/ with identifier .*$//'
done
set -- $(quota) 0 0
echo "charged: $(($1 - keys0)) keys, $(($2 - bytes0)) bytes"
_user_do "cat /proc/keys" | grep " \.fscrypt " | awk '{print $2, $5, $6, $7, $8, $9}' | sed 's/[0-9a-f]\{32\}\.uid/ID.uid/'
echo 200 > $f
_scratch_cycle_mount
set -- $(quota) 0 0
echo "after the unmount: $(($1 - keys0)) keys, $(($2 - bytes0)) bytes"
_scratch_unmount
