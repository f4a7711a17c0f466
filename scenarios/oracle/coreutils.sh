# Messages and orders of GNU coreutils 9.1 and mawk: stat says "cannot
# statx", ls sorts its operands (files first, then each directory),
# awk's length.
# vfslab sh --fs ext4
stat /nosuch
mkdir /tmp/b /tmp/a
touch /tmp/c /tmp/a/x
ls /tmp/b /tmp/c /tmp/a /tmp/a/x
ls -d /tmp/c /tmp/b /tmp/a
echo "hello world" | awk '{print length($0), length, length($2)}'
