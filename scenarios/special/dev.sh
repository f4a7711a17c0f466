# vfslab sh
# kernel: 6.12
# The machine's /dev: the memory devices and the scratch disks, their
# numbers, types and modes; reads and writes through them.
stat -c '%n %F %t %T %a' /dev/null /dev/zero /dev/full /dev/random /dev/urandom
stat -c '%n %F %t %T' /dev/vdb /dev/vdc
dd if=/dev/zero bs=3 count=2 status=none | od -An -tx1
dd if=/dev/urandom bs=16 count=1 status=none | wc -c
echo x > /dev/null; echo "null: $?"
dd if=/dev/zero of=/dev/full bs=1 count=1 status=none; echo "full: $?"
mkfifo /tmp/p
(echo one; echo two) > /tmp/p &
cat /tmp/p
wait
rm /tmp/p
