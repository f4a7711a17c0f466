# keyctl's view of the keys syscalls (security/keys/keyctl.c): add_key's
# default permissions (a user key readable and writable by its possessor,
# a logon key not readable: no ->read), keyctl describe and /proc/keys
# (proc_keys_show) lines, an update in place of a key with the same type
# and description, revoke (EKEYREVOKED, the R flag), invalidate (gone at
# once), timeouts, and a logon key's required "service:" prefix.
ring=$(keyctl newring keyctl-test @s)
filter() { sed -e "s/^ *[0-9][0-9]*:/KEY:/" -e "s/^[0-9a-f]\{8\} /KEY /"; }
u=$(keyctl add user mykey "hello world" $ring)
l=$(echo -n secret | keyctl padd logon svc:name $ring)
keyctl describe $u | filter
keyctl describe $l | filter
keyctl rdescribe $u @
keyctl print $u
keyctl pipe $u; echo
keyctl read $u
keyctl read $l
keyctl print $l
keyctl add logon nocolon data $ring
keyctl add nosuchtype d data $ring
keyctl add keyring .dotted "" $ring
u2=$(keyctl add user mykey "updated" $ring)
[ "$u2" = "$u" ] && echo "same key, updated: $(keyctl print $u)"
keyctl list $ring | filter | sort
grep -E " (user|logon|keyring) +(mykey|svc:name|keyctl-test)" /proc/keys | awk '{print $2, $5, $6, $7, $8, $9, $10}' | sort
keyctl timeout $u 5000
grep " mykey: " /proc/keys | awk '{print $4}'
keyctl revoke $u
keyctl search $ring user mykey
keyctl print $u
grep " mykey: " /proc/keys | awk '{print $2, $NF}'
keyctl invalidate $l
keyctl search $ring logon svc:name
grep -c " svc:name: " /proc/keys
keyctl unlink $u $ring
keyctl list $ring
keyctl unlink $ring @s
