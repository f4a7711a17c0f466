# keyctl show: a key made with the default permissions gets read only when
# its type has ->read (key_create_or_update), so a logon key (fscrypt's v1
# keys) is --alsw-v; keyctl 1.6.3's columns.
# vfslab sh --fs ext4
# kernel: 6.12
keyctl add user vfslab:user payload @s >/dev/null
_add_session_encryption_key 0000111122223333 "$TEST_RAW_KEY"
keyctl show
