# tmpfs (the machine's /tmp) has no fscrypt: shmem_file_operations and
# shmem_dir_operations set no unlocked_ioctl, so every fscrypt ioctl is
# ENOTTY (vfs_ioctl), and a file made there is not encrypted.
mkdir -p /tmp/fscrypt-tmpfs
xfs_io -c "set_encpolicy" /tmp/fscrypt-tmpfs
xfs_io -c "get_encpolicy" /tmp/fscrypt-tmpfs
_add_enckey /tmp "$TEST_RAW_KEY"
echo contents > /tmp/fscrypt-tmpfs/file
xfs_io -c "get_encpolicy" /tmp/fscrypt-tmpfs/file
cat /tmp/fscrypt-tmpfs/file
rm -rf /tmp/fscrypt-tmpfs
