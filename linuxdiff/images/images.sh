# The image comparison of `vfslab linux images` (linuxdiff/images.go):
# functions that both sides run. img_make makes an encrypted, casefolded
# filesystem on a device and fills it under the xfstests key; img_list
# prints what a reader sees: with the key, every name's type, mode, size,
# link count, symlink target and contents' md5, and the directories'
# lsattr flags; without it, the number of no-key names per directory and
# whether each has the no-key form (base64url characters only).

# img_make FS DEV MNT
img_make() {
	local fs=$1 dev=$2 mnt=$3 d
	case $fs in
	ext4) mkfs.ext4 -q -F -O encrypt,casefold "$dev" ;;
	f2fs) mkfs.f2fs -q -f -O encrypt,casefold -C utf8 "$dev" >/dev/null ;;
	esac
	mount -t "$fs" "$dev" "$mnt" || return 1
	_add_enckey "$mnt" "$TEST_RAW_KEY" >/dev/null
	mkdir "$mnt/plain" "$mnt/enc" "$mnt/cf" "$mnt/enccf"
	_set_encpolicy "$mnt/enc" "$TEST_KEY_IDENTIFIER"
	chattr +F "$mnt/cf"
	chattr +F "$mnt/enccf"
	_set_encpolicy "$mnt/enccf" "$TEST_KEY_IDENTIFIER"
	for d in plain enc cf enccf; do
		img_fill "$mnt/$d"
	done
	umount "$mnt"
}

# img_fill DIR: files of several sizes, long and non-ASCII names, short
# and long symlinks, a hard link, and a subdirectory of 150 names (more
# than one block: an htree on ext4, dentry blocks on f2fs).
img_fill() {
	local d=$1 i long= target=
	: >"$d/empty"
	echo hello >"$d/small"
	seq 1 1000 >"$d/seq"
	seq 1 20000 >"$d/big"
	echo accent >"$d/café"
	for i in $(seq 1 255); do long=${long}n; done
	echo long >"$d/$long"
	ln -s small "$d/sym"
	for i in $(seq 1 300); do target=${target}t; done
	ln -s "$target" "$d/longsym"
	ln "$d/small" "$d/hard"
	mkdir "$d/sub"
	for i in $(seq 1 150); do
		echo "$i" >"$d/sub/file-with-a-longish-name-$i"
	done
}

# img_list FS DEV MNT (a few processes in all: under emulation each
# fork costs tens of milliseconds)
img_list() {
	local fs=$1 dev=$2 mnt=$3 p d names
	mount -t "$fs" -o ro "$dev" "$mnt" || { echo "mount failed"; return 1; }
	_add_enckey "$mnt" "$TEST_RAW_KEY" >/dev/null
	cd "$mnt" || return 1
	names=$(find . | grep -v '^\./lost+found' | LC_ALL=C sort)
	# shellcheck disable=SC2086 # no name has a space
	stat -c '%n %F %a %s %h' $names
	# shellcheck disable=SC2086
	for p in $names; do
		[ -L "$p" ] && echo "$p -> $(readlink "$p")"
	done
	# shellcheck disable=SC2086
	md5sum $(for p in $names; do [ -f "$p" ] && [ ! -L "$p" ] && echo "$p"; done)
	for d in plain enc cf enccf; do
		[ -e "$d/CAFÉ" ] && echo "$d: CAFÉ found" || echo "$d: CAFÉ not found"
	done
	lsattr -d plain enc cf enccf plain/sub enc/sub cf/sub enccf/sub
	lsattr plain/empty plain/small plain/seq plain/big enc/empty enc/small enc/seq enc/big
	cd /
	umount "$mnt"
	mount -t "$fs" -o ro "$dev" "$mnt" || { echo "mount failed"; return 1; }
	for d in enc enccf; do
		img_nokey "$mnt/$d" "$d"
		for p in "$mnt/$d"/*; do
			[ -d "$p" ] && img_nokey "$p" "$d/(subdirectory)"
		done
	done
	umount "$mnt"
}

# img_nokey DIR NAME: how many names a reader without the key sees, and
# how many of them are not in the no-key form.
img_nokey() {
	echo "no key: $2: $(ls "$1" | wc -l) names, $(ls "$1" | grep -c -v '^[A-Za-z0-9_,+-]*$') not in the no-key form"
}
