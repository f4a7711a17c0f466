# The prelude of vfslab sh: the helpers of xfstests' common/rc,
# common/filter and common/encrypt that fscrypt tests call, written for the
# simulated machine. Every script runs after it; `. ./common/...` lines are
# no-ops.

XFS_IO_PROG=xfs_io
KEYCTL_PROG=keyctl
FSCRYPTCTL_PROG=fscryptctl
MKFS_PROG=mkfs
here=/
seqres=/tmp/vfslab.res
tmp=/tmp/vfslab.tmp

# The fixed test key of common/encrypt: the 64 bytes 0x01..0x40, as the
# escaped string that `echo -ne` turns into bytes.
TEST_RAW_KEY=
for i in $(seq 1 64); do
	TEST_RAW_KEY="$TEST_RAW_KEY\\x$(printf "%02x" $i)"
done
TEST_KEY_DESCRIPTOR="0000111122223333"
TEST_KEY_IDENTIFIER="69b2f6edeee720cce0577937eb8a6751"
TEST_KEYRING_ID=

# $RANDOM repeats with the machine's seed (assigning RANDOM seeds it).
RANDOM=${VFSLAB_SEED:-0}

_fail() { echo "$*" | tee -a $seqres.full; exit 1; }
_notrun() { echo "$seq not run: $*"; exit 0; }
_begin_fstest() { echo "QA output created by $seq"; }
_supported_fs() { :; }
_require_scratch() { :; }
_require_scratch_nocheck() { :; }
_require_test() { :; }
_require_xfs_io_command() { :; }
_require_command() { :; }
_require_user() { :; }
_require_symlinks() { :; }
_require_scratch_encryption() { :; }
_require_encryption_policy_support() { :; }
_require_scratch_shutdown() { _notrun "shutdown is not modelled"; }
_require_scratch_casefold() { :; }
_exclude_fs() { :; }
_cleanup() { :; }
_check_scratch_fs() { :; }
_scratch_fsck() { :; }
status=0

_scratch_mkfs()
{
	case "$FSTYP" in
	f2fs) mkfs.f2fs -f "$@" $SCRATCH_DEV >/dev/null ;;
	*) mkfs.ext4 -q -F "$@" $SCRATCH_DEV >/dev/null ;;
	esac
}

_scratch_mkfs_encrypted()
{
	case "$FSTYP" in
	f2fs) _scratch_mkfs -O encrypt "$@" ;;
	*) _scratch_mkfs -O encrypt "$@" ;;
	esac
}

# The model's devices are sparse and unsized: the size is ignored.
_scratch_mkfs_sized()
{
	shift
	_scratch_mkfs "$@"
}

_scratch_mkfs_stable_inodes_encrypted() { _scratch_mkfs_encrypted "$@"; }

_scratch_mount()
{
	if [ -n "$MOUNT_OPTIONS" ]; then
		mount -o "$MOUNT_OPTIONS" "$@" $SCRATCH_DEV $SCRATCH_MNT
	else
		mount "$@" $SCRATCH_DEV $SCRATCH_MNT
	fi
}

_scratch_unmount() { umount $SCRATCH_MNT; }

_scratch_cycle_mount()
{
	_scratch_unmount && _scratch_mount "$@"
}

_scratch_remount() { mount -o remount,"$1" $SCRATCH_MNT; }

_init_session_keyring()
{
	TEST_KEYRING_ID=$(keyctl new_session)
}
_new_session_keyring() { keyctl new_session >/dev/null; }

_set_encpolicy()
{
	local dir=$1
	shift
	xfs_io -c "set_encpolicy $*" "$dir"
}

_get_encpolicy()
{
	local file=$1
	shift
	xfs_io -c "get_encpolicy $*" "$file"
}

_add_enckey()
{
	local mnt=$1
	local raw_key=$2
	shift 2
	echo -ne "$raw_key" | xfs_io -c "add_enckey $*" "$mnt"
}

_user_do_add_enckey()
{
	local mnt=$1
	local raw_key=$2
	shift 2
	_user_do "echo -ne \"$raw_key\" | xfs_io -c \"add_enckey $*\" \"$mnt\""
}

_user_do_get_encpolicy()
{
	local file=$1
	shift
	_user_do "xfs_io -c \"get_encpolicy $*\" \"$file\""
}

_rm_enckey()
{
	local mnt=$1
	local keyspec=$2
	shift 2
	xfs_io -c "rm_enckey $* $keyspec" "$mnt"
}

_user_do_rm_enckey()
{
	local mnt=$1
	local keyspec=$2
	shift 2
	_user_do "xfs_io -c \"rm_enckey $* $keyspec\" \"$mnt\""
}

_enckey_status()
{
	local mnt=$1
	local keyspec=$2
	shift 2
	xfs_io -c "enckey_status $* $keyspec" "$mnt"
}

_user_do_enckey_status()
{
	local mnt=$1
	local keyspec=$2
	shift 2
	_user_do "xfs_io -c \"enckey_status $* $keyspec\" \"$mnt\""
}

# As common/rc: the command goes to su's standard input.
_user_do() { echo "$1" | su -s /bin/bash ${qa_user:-fsgqa} 2>&1 | _filter_user_do; }

_user_do_set_encpolicy()
{
	local dir=$1
	shift
	_user_do "xfs_io -c \"set_encpolicy $*\" \"$dir\""
}

_require_renameat2() { :; }
_require_test_program() { :; }
_require_chattr() { :; }
_require_fscrypt_program() { :; }
_require_sysctl_variable() { :; }
TIME_FACTOR=1
LOAD_FACTOR=1

_check_session_keyring() { :; }

_generate_key_descriptor()
{
	local keydesc="" i
	for i in 1 2 3 4 5 6 7 8; do
		keydesc="${keydesc}$(printf "%02x" $((RANDOM % 256)))"
	done
	echo $keydesc
}

_generate_raw_encryption_key()
{
	local size=${1:-64} raw="" i
	for i in $(seq 1 $size); do
		raw="${raw}\\x$(printf "%02x" $((RANDOM % 256)))"
	done
	echo $raw
}

_get_fs_keyprefix()
{
	case $FSTYP in
	ext4|f2fs) echo $FSTYP ;;
	*) echo fscrypt ;;
	esac
}

# A v1 key in the session keyring, as struct fscrypt_key (mode, raw[64],
# size), which fscrypt finds for v1 policies (find_and_lock_process_key).
_add_session_encryption_key()
{
	local keydesc=$1 raw=$2
	echo -n -e "\\x00\\x00\\x00\\x00${raw}\\x40\\x00\\x00\\x00" |
		keyctl padd logon $(_get_fs_keyprefix):$keydesc @s >/dev/null
}

_generate_session_encryption_key()
{
	local keydesc=$(_generate_key_descriptor)
	local raw=$(_generate_raw_encryption_key)
	_add_session_encryption_key $keydesc $raw
	echo $keydesc
}

_unlink_session_encryption_key()
{
	local keyid=$(keyctl search @s logon $(_get_fs_keyprefix):$1)
	keyctl unlink $keyid >/dev/null
}

_revoke_session_encryption_key()
{
	local keyid=$(keyctl search @s logon $(_get_fs_keyprefix):$1)
	keyctl revoke $keyid
}

_filter_scratch()
{
	sed -e "s,$SCRATCH_MNT,SCRATCH_MNT,g" -e "s,$SCRATCH_DEV,SCRATCH_DEV,g"
}

_filter_test_dir()
{
	sed -e "s,$TEST_DIR,TEST_DIR,g" -e "s,$TEST_DEV,TEST_DEV,g"
}

_filter_xfs_io()
{
	sed -e "s/[0-9/.]* [GMKiBbytes]*, [0-9]* ops\; [0-9/:. sec]* ([infa0-9/.]* [EPGMKiBbytes]*\/sec and [infa0-9/.]* ops\/sec)/XXX Bytes, X ops\; XX:XX:XX.X (XXX YYY\/sec and XXX ops\/sec)/"
}

_filter_xfs_io_error() { sed -e "s/^\(.*\)64\(: .*$\)/\1XXX\2/"; }

_filter_user_do()
{
	sed -e 's/.*Permission denied.*/Permission denied/' -e '/^[[:space:]]*$/d'
}

_filter_enckey_status() { cat; }

# stat(1) from coreutils before 8.32 says "cannot stat"; the .out files
# expect "cannot statx".
_filter_stat() { sed -e "s/cannot stat '/cannot statx '/"; }

_filter_nokey_filenames()
{
	sed -E -e "s|$1/[A-Za-z0-9+,_-]+|$1/NOKEY_NAME|g"
}

_get_encryption_nonce() { :; }

_encrypt_mount_options() { :; }

# vfslab's own commands have no counterpart on Linux: on Linux (vfslab
# linux run) and under vfslab sh --as-linux, which vfslab linux diff
# compares with it, each says that it is skipped.
if [ -n "$VFSLAB_OWN_SKIP" ]; then
	trace() { echo "trace: vfslab's own command, skipped on Linux" >&2; }
	events() { echo "events: vfslab's own command, skipped on Linux" >&2; }
	dump() { echo "dump: vfslab's own command, skipped on Linux" >&2; }
	patches() { echo "patches: vfslab's own command, skipped on Linux" >&2; }
fi
