#!/bin/bash
# PID 1 of vfslab's Linux oracle (package linuxvm): mounts the kernel's
# file systems, loads the modules, runs every script of the batch under
# /batch (appended to the initramfs by the host) and writes each one's
# results to /dev/vda, then powers off. Lines starting with "VFSLAB-" on
# the console are the host's progress markers.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export LANG=C LC_ALL=C
con=/dev/console
say() { echo "VFSLAB-$*" >$con; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /run/vfslab
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
hostname vfslab-linux

modprobe -a $(cat /etc/vfslab/modules) 2>&1 | sed 's/^/VFSLAB-WARN /' >$con

for i in $(seq 1 100); do
	[ -b /dev/vda ] && break
	sleep 0.1
done
if [ ! -b /dev/vda ]; then
	say "FAIL no results disk /dev/vda"
	poweroff -f
fi
scratch=(/dev/vd[b-z])
[ -b "${scratch[0]}" ] || scratch=()

say "BOOTED $(uname -r) $(cut -d' ' -f1 /proc/uptime)"

# The mounts the guest itself made; everything else is a script's.
system_mounts=" / /proc /sys /dev /dev/pts /tmp /run /sys/kernel/debug /sys/kernel/tracing /sys/kernel/security /sys/fs/cgroup "

# reset undoes what a script left behind; "wipe" also discards the scratch
# devices (needless before the first script and after the last).
reset() {
	local p mounts m dev
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[ "$p" = 1 ] || [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
		[ -s /proc/$p/cmdline ] && kill -9 "$p" 2>/dev/null
	done
	mounts=()
	while read -r _ m _; do
		case "$system_mounts" in
		*" $m "*) ;;
		*) mounts=("$m" "${mounts[@]}") ;;
		esac
	done </proc/self/mounts
	for m in "${mounts[@]}"; do
		umount -l "$m" 2>/dev/null
	done
	dmsetup remove_all -f >/dev/null 2>&1
	losetup -D 2>/dev/null
	rm -rf /tmp/* /tmp/.[!.]* /mnt/* /root/* /root/.[!.]* /home/*/* 2>/dev/null
	mkdir -p /mnt/scratch /mnt/test
	echo 3 >/proc/sys/vm/drop_caches
	[ "$1" = wipe ] || return 0
	for dev in "${scratch[@]}"; do
		blkdiscard -f "$dev" 2>/dev/null || blkdiscard "$dev" 2>/dev/null ||
			dd if=/dev/zero of="$dev" bs=1M count=64 status=none
	done
}

# record appends one script's results to /dev/vda: for each file a line
# "VFSLAB-FILE INDEX NAME SIZE" and its bytes, then "VFSLAB-RECORD-END
# INDEX".
roff=0
record() {
	local idx=$1 dir=$2 f rec=/run/vfslab/record
	: >$rec
	for f in stdout stderr status dmesg; do
		[ -f "$dir/$f" ] || : >"$dir/$f"
		printf 'VFSLAB-FILE %s %s %s\n' "$idx" "$f" "$(stat -c %s "$dir/$f")" >>$rec
		cat "$dir/$f" >>$rec
	done
	printf 'VFSLAB-RECORD-END %s\n' "$idx" >>$rec
	dd if=$rec of=/dev/vda bs=64K seek=$roff oflag=seek_bytes conv=notrunc,fsync status=none
	roff=$((roff + $(stat -c %s $rec)))
}

for d in /batch/[0-9]*; do
	[ -d "$d" ] || continue
	idx=${d##*/}
	out=/run/vfslab/$idx
	mkdir -p "$out"
	if [ -n "$first" ]; then reset wipe; fi
	first=no
	timeout=$(cat "$d/timeout" 2>/dev/null || echo 300)
	mapfile -d '' envs <"$d/env"
	mapfile -d '' args <"$d/args"
	dmesg -C
	say "START $idx $(cut -d' ' -f1 /proc/uptime)"
	(
		cd /
		# keyctl says "Joined session keyring" on its standard error: the
		# script's goes by descriptor 3.
		exec setsid timeout -k 5 "$timeout" env -i "${envs[@]}" \
			keyctl session - bash -c 'exec 2>&3 3>&-; . /etc/vfslab/prelude.sh; . "$0"' "$d/script.sh" "${args[@]}" 2>/dev/null
	) </dev/null >"$out/stdout" 3>"$out/stderr"
	echo $? >"$out/status"
	dmesg >"$out/dmesg"
	record "$idx" "$out"
	say "END $idx $(cat "$out/status") $(cut -d' ' -f1 /proc/uptime)"
	rm -rf "$out"
done
reset
sync
say "DONE $(cut -d' ' -f1 /proc/uptime)"
poweroff -f
