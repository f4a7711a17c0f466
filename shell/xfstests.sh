# The --xfstests part of vfslab sh's prelude: what xfstests' check,
# common/preamble, common/rc and the other common/* files give a test
# beyond the shared prelude, written for the simulated machine. It is
# loaded after prelude.sh, whose helpers it overrides where check's
# differ. The helpers behave as xfstests' do and print xfstests'
# messages (a _require_* that finds its need missing calls _notrun with
# the reason xfstests gives); none of xfstests' code is copied here.

# check runs the tests from the checkout: $here is its path, and the
# machine's $here/src holds the programs of xfstests' src/ it has.
here=$VFSLAB_XFSTESTS_HERE

# ---- common/config: the programs, as set_prog_path finds them on $PATH
# (empty when the machine does not have the program).
_vfslab_prog() { command -v "$1" 2>/dev/null; }
XFS_IO_PROG=$(_vfslab_prog xfs_io)
KEYCTL_PROG=$(_vfslab_prog keyctl)
FSCRYPTCTL_PROG=$(_vfslab_prog fscryptctl)
XZ_PROG=$(_vfslab_prog xz)
LZ4_PROG=$(_vfslab_prog lz4)
MOUNT_PROG=$(_vfslab_prog mount)
UMOUNT_PROG=$(_vfslab_prog umount)
CHATTR_PROG=$(_vfslab_prog chattr)
LSATTR_PROG=$(_vfslab_prog lsattr)
ATTR_PROG=$(_vfslab_prog attr)
GETFATTR_PROG=$(_vfslab_prog getfattr)
SETFATTR_PROG=$(_vfslab_prog setfattr)
AWK_PROG=$(_vfslab_prog awk)
SED_PROG=$(_vfslab_prog sed)
E2FSCK_PROG=$(_vfslab_prog e2fsck)
DEBUGFS_PROG=$(_vfslab_prog debugfs)
TUNE2FS_PROG=$(_vfslab_prog tune2fs)
DUMP_F2FS_PROG=$(_vfslab_prog dump.f2fs)
F2FS_IO_PROG=$(_vfslab_prog f2fs_io)
F2FS_INJECT_PROG=$(_vfslab_prog inject.f2fs)
F2FS_FSCK_PROG=$(_vfslab_prog fsck.f2fs)
FSVERITY_PROG=$(_vfslab_prog fsverity)
MKFS_EXT4_PROG=$(_vfslab_prog mkfs.ext4)
MKFS_F2FS_PROG=$(_vfslab_prog mkfs.f2fs)
LOGGER_PROG=true
DF_PROG=$(_vfslab_prog df)

# common/config's defaults for ext4 and f2fs (_mount_opts, _fsck_opts).
MOUNT_OPTIONS=${MOUNT_OPTIONS:-}
MKFS_OPTIONS=${MKFS_OPTIONS:-}
case "$FSTYP" in
ext2|ext3|ext4) FSCK_OPTIONS=-nf ;;
f2fs) FSCK_OPTIONS= ;;
*) FSCK_OPTIONS=-n ;;
esac
USE_REMOUNT=0
KEEP_DMESG=no
TIME_FACTOR=1
LOAD_FACTOR=1
DEBUGFS_MNT=/sys/kernel/debug

# check sets $seq for the test itself (_begin_fstest); its own steps see
# none, and write to the test's results ($seqres) with files of their own
# ($tmp).
unset seq
seqres=$RESULT_DIR/${seqnum##*/}
tmp=/tmp/check.$$

# ---- common/exit and common/preamble

_exit()
{
	[ -n "$1" ] && status="$1"
	exit "$status"
}

_fatal()
{
	echo "$*"
	_exit 1
}

_cleanup()
{
	cd /
	rm -r -f $tmp.*
}

# The machine has no signals: only the EXIT trap is set.
_register_cleanup()
{
	local __cmd="$1"
	[ -n "$__cmd" ] && __cmd="$__cmd; "
	trap "${__cmd}exit \$status" EXIT
}

_begin_fstest()
{
	if [ -n "$seq" ]; then
		echo "_begin_fstest can only be called once!"
		_exit 1
	fi
	seq=${seqnum##*/}
	seqres=$RESULT_DIR/$seq
	echo "QA output created by $seq"
	tmp=/tmp/$$
	status=1
	_register_cleanup _cleanup
	rm -f $seqres.full $seqres.hints
}

# ---- common/rc: messages and endings

_fail()
{
	echo "$*" | tee -a $seqres.full
	echo "(see $seqres.full for details)"
	_exit 1
}

_notrun()
{
	echo "$*" > $seqres.notrun
	echo "$seq not run: $*"
	rm -f ${RESULT_DIR}/require_test* ${RESULT_DIR}/require_scratch*
	_exit 0
}

_dump_err() { echo "$*"; }
_dump_err_cont() { echo -n "$*"; }
_dump_err2() { echo "$*" >&2; }

_log_err()
{
	echo "$*" | tee -a $seqres.full
	echo "(see $seqres.full for details)"
}

_fixed_in_version()
{
	echo "HINT: You _MAY_ be hit by a known issue on $1 version < $2." >> $seqres.hints
	echo >> $seqres.hints
}
_fixed_in_kernel_version() { _fixed_in_version kernel "$@"; }
_fixed_by_git_commit()
{
	local pkg=$1
	shift
	echo "HINT: You _MAY_ be missing $pkg fix:" >> $seqres.hints
	echo "      $*" >> $seqres.hints
	echo >> $seqres.hints
}
_fixed_by_kernel_commit() { _fixed_by_git_commit kernel "$@"; }
_wants_git_commit()
{
	local pkg=$1
	shift
	echo "This test wants $pkg fix:" >> $seqres.hints
	echo "      $*" >> $seqres.hints
	echo >> $seqres.hints
}
_wants_kernel_commit() { _wants_git_commit kernel "$@"; }

# ---- common/rc: devices and mounts

_get_filesize() { stat -c %s "$1"; }

_get_block_size()
{
	if [ -z "$1" ] || [ ! -d "$1" ]; then
		echo "Missing mount point argument for _get_block_size"
		_exit 1
	fi
	stat -f -c %S "$1"
}
_get_file_block_size() { _get_block_size "$@"; }
_get_dir_block_size() { _get_block_size "$@"; }

_mount() { $MOUNT_PROG "$@"; }

# The mount point of device $1 (of type $2, default $FSTYP), from
# /proc/mounts as findmnt -S reads it.
_is_dev_mounted()
{
	local fstype=${2:-$FSTYP} src dir type rest
	while read -r src dir type rest; do
		if [ "$src" = "$1" ] && [ "$type" = "$fstype" ]; then
			echo "$dir"
			return
		fi
	done < /proc/mounts
}

# The filesystem type device $1 is mounted with ("" when it is not).
_fs_type()
{
	local src dir type rest
	while read -r src dir type rest; do
		if [ "$src" = "$1" ]; then
			echo "$type"
			return
		fi
	done < /proc/mounts
}

# _unmount runs umount(8), its output to the terminal and $seqres.full.
_unmount()
{
	local outlog="$tmp.umount" errlog="$tmp.umount.err"
	rm -f "$outlog" "$errlog"
	$UMOUNT_PROG "$@" 2> "$errlog" > "$outlog"
	local res=$?
	if [ -s "$outlog" ]; then
		cat "$outlog" >> $seqres.full
		cat "$outlog"
	fi
	if [ -s "$errlog" ]; then
		cat "$errlog" >> $seqres.full
		cat "$errlog" >&2
	fi
	rm -f "$outlog" "$errlog"
	return $res
}

_scratch_mount_options()
{
	echo $MOUNT_OPTIONS "$@" $SCRATCH_DEV $SCRATCH_MNT
}

_try_scratch_mount()
{
	_mount -t $FSTYP $(_scratch_mount_options "$@")
}

_scratch_mount()
{
	_try_scratch_mount "$@" || _fail "mount $(_scratch_mount_options "$@") failed"
}

_scratch_unmount() { _unmount $SCRATCH_DEV; }
_scratch_umount_idmapped() { _unmount $SCRATCH_MNT; }

_scratch_remount()
{
	if [ -n "$1" ]; then
		_try_scratch_mount "-o remount,$1"
	fi
}

_scratch_cycle_mount()
{
	_scratch_unmount
	_scratch_mount "$@"
}

_test_mount()
{
	_mount -t $FSTYP $TEST_FS_MOUNT_OPTS "$@" $TEST_DEV $TEST_DIR
}
_test_unmount() { _unmount $TEST_DEV; }
_test_cycle_mount() { _test_unmount && _test_mount; }

_sync_fs()
{
	if [ -e "$1" ]; then
		$XFS_IO_PROG -rxc "syncfs" "$1" > /dev/null 2>&1
		return
	fi
	sync
}
_scratch_sync() { _sync_fs $SCRATCH_MNT; }
_test_sync() { _sync_fs $TEST_DIR; }

_short_dev() { echo ${1##*/}; }

_scratch_mkfs_options() { echo $MKFS_OPTIONS "$@" $SCRATCH_DEV; }

_scratch_mkfs()
{
	case "$FSTYP" in
	ext2|ext3|ext4) $MKFS_EXT4_PROG -F $MKFS_OPTIONS "$@" $SCRATCH_DEV ;;
	f2fs) $MKFS_F2FS_PROG -f $MKFS_OPTIONS "$@" $SCRATCH_DEV ;;
	*) _notrun "Filesystem $FSTYP not supported in _scratch_mkfs" ;;
	esac
}

# _scratch_mkfs_sized SIZE [BLOCKSIZE]: a filesystem of SIZE bytes.
_try_scratch_mkfs_sized()
{
	local fssize=$1 blocksize=$2
	[ -z "$blocksize" ] && blocksize=4096
	local blocks=$((fssize / blocksize))
	case "$FSTYP" in
	ext2|ext3|ext4)
		$MKFS_EXT4_PROG -F $MKFS_OPTIONS -b $blocksize $SCRATCH_DEV $blocks ;;
	f2fs)
		$MKFS_F2FS_PROG -f $MKFS_OPTIONS $SCRATCH_DEV $((fssize / 512)) ;;
	*)
		_notrun "Filesystem $FSTYP not supported in _scratch_mkfs_sized" ;;
	esac
}
_scratch_mkfs_sized()
{
	_try_scratch_mkfs_sized "$@" || _notrun "_scratch_mkfs_sized failed with ($*)"
}

_require_names_are_bytes()
{
	case "$FSTYP" in
	ext2|ext3|ext4|f2fs|xfs|btrfs) ;;
	*) _notrun "$FSTYP does not allow unrestricted byte streams for names" ;;
	esac
}

# xfs_scrub's Unicode name checks: only XFS has them.
_check_xfs_scrub_does_unicode()
{
	[ "$FSTYP" = xfs ] || return 1
	return 1
}

# ---- common/rc: requirements

# The device a block-device path names (the model's device nodes are
# their names: no major:minor to compare).
_is_block_dev()
{
	local dev=$1
	[ -L "$dev" ] && dev=$(readlink -f "$dev")
	[ -b "$dev" ] && echo "$dev"
}

_require_scratch_nocheck()
{
	if [ -z "$SCRATCH_DEV" ] || [ -z "$(_is_block_dev "$SCRATCH_DEV")" ]; then
		_notrun "this test requires a valid \$SCRATCH_DEV"
	fi
	if [ "$SCRATCH_DEV" = "$TEST_DEV" ]; then
		_notrun "this test requires a valid \$SCRATCH_DEV"
	fi
	if [ ! -d "$SCRATCH_MNT" ]; then
		_notrun "this test requires a valid \$SCRATCH_MNT"
	fi
	if [ -n "$(_fs_type $SCRATCH_DEV)" ]; then
		if ! _scratch_unmount; then
			echo "failed to unmount $SCRATCH_DEV"
			_exit 1
		fi
	fi
	rm -f ${RESULT_DIR}/require_scratch
}

_require_scratch()
{
	_require_scratch_nocheck
	touch ${RESULT_DIR}/require_scratch
}

_require_test()
{
	if [ -z "$TEST_DEV" ] || [ -z "$(_is_block_dev "$TEST_DEV")" ]; then
		_notrun "this test requires a valid \$TEST_DEV"
	fi
	if [ ! -d "$TEST_DIR" ]; then
		_notrun "this test requires a valid \$TEST_DIR"
	fi
	touch ${RESULT_DIR}/require_test
}

_require_command()
{
	local name
	case $# in
	2) name="$2" ;;
	1) name="$1" ;;
	*) _fail "usage: _require_command <command> [<name>]" ;;
	esac
	local prog=${1%% *}
	if [ -z "$prog" ] || [ ! -x "$prog" ]; then
		_notrun "$name utility required, skipped this test"
	fi
}

_require_test_program()
{
	local prog=$here/src/$1
	[ -x $prog ] || _notrun "$prog not built"
}

_require_user_exists()
{
	grep -q "^$1:" /etc/passwd || _notrun "$1 user not defined."
}

_require_user()
{
	qa_user=fsgqa
	[ -n "$1" ] && qa_user=$1
	_require_user_exists $qa_user
	echo /bin/true | su $qa_user
	[ "$?" = "0" ] || _notrun "$qa_user cannot execute commands."
}

_require_symlinks()
{
	local target=$(mktemp -p $TEST_DIR)
	local link=$(mktemp -p $TEST_DIR -u)
	if ! ln -s $(basename $target) $link; then
		rm -f $target
		_notrun "Require symlinks support"
	fi
	rm -f $target $link
}

_require_extra_fs()
{
	grep -q -w "$1" /proc/filesystems || _notrun "this test requires $1 support"
}

_require_check_dmesg()
{
	[ -w /dev/kmsg ] || _notrun "Test requires writable /dev/kmsg."
}

_exclude_fs()
{
	[ "$1" = "$FSTYP" ] && _notrun "not suitable for this filesystem type: $FSTYP"
}

# xfstests' _supported_fs was removed; older tests still call it.
_supported_fs()
{
	local f
	for f; do
		[ "$f" = "$FSTYP" ] || [ "$f" = generic ] && return 0
	done
	_notrun "not suitable for this filesystem type: $FSTYP"
}

# _exclude_scratch_mount_option OPT...: not run when $MOUNT_OPTIONS has one.
_exclude_scratch_mount_option()
{
	local o
	for o; do
		case ",$(echo $MOUNT_OPTIONS | sed -e 's/^-o *//' -e 's/ -o /,/g')," in
		*,$o,*|*,$o=*) _notrun "mount option \"$o\" not allowed in this test" ;;
		esac
	done
}

_require_sysctl_variable()
{
	sysctl $1 > /dev/null 2>&1 || _notrun "$1 sysctl unavailable"
}

# _require_xfs_io_command COMMAND [SWITCH]: xfs_io has the command (and
# the switch), and the kernel and filesystem support it.
_require_xfs_io_command()
{
	if [ -z "$1" ]; then
		echo "Usage: _require_xfs_io_command command [switch]" 1>&2
		_exit 1
	fi
	local command=$1
	shift
	local param="$*" param_checked="" testio
	local testfile=$TEST_DIR/$$.xfs_io
	case $command in
	fiemap)
		testio=$($XFS_IO_PROG -f -c "pwrite 0 20k" -c "fsync" -c "fiemap -v $param" $testfile 2>&1)
		param_checked="$param"
		;;
	syncfs)
		touch $testfile
		testio=$($XFS_IO_PROG -c "syncfs" $testfile 2>&1)
		;;
	*)
		testio=$($XFS_IO_PROG -c "help $command" 2>&1)
		;;
	esac
	rm -f $testfile > /dev/null 2>&1
	echo $testio | grep -q "not found" &&
		_notrun "xfs_io $command $param_checked support is missing"
	echo $testio | grep -q "Operation not supported\|Inappropriate ioctl" &&
		_notrun "xfs_io $command $param_checked failed (old kernel/wrong fs?)"
	echo $testio | grep -q "Invalid" &&
		_notrun "xfs_io $command $param_checked failed (old kernel/wrong fs/bad args?)"
	echo $testio | grep -q "Function not implemented" &&
		_notrun "xfs_io $command $param_checked support is missing (missing syscall?)"
	[ -n "$param" ] || return 0
	if [ -z "$param_checked" ]; then
		$XFS_IO_PROG -c "help $command" | grep -E -q "^ $param ([a-zA-Z0-9_]+ )?--" ||
			_notrun "xfs_io $command doesn't support $param"
	else
		echo $testio | grep -q "\(invalid option\|not supported\)" &&
			_notrun "xfs_io $command doesn't support $param"
	fi
	return 0
}

# ---- common/renameat2

_require_renameat2()
{
	local flags=$1 cmd=""
	local dir=$(mktemp -d -p $TEST_DIR)
	[ -x $here/src/renameat2 ] || _notrun "renameat2 binary not found"
	touch $dir/foo
	case $flags in
	noreplace) cmd="-n $dir/foo $dir/bar" ;;
	exchange) touch $dir/bar; cmd="-x $dir/foo $dir/bar" ;;
	whiteout) touch $dir/bar; cmd="-w $dir/foo $dir/bar" ;;
	"") ;;
	*) rm -rf $dir; _fail "_require_renameat2: only support noreplace,exchange,whiteout rename flags" ;;
	esac
	if ! $here/src/renameat2 -t $cmd; then
		rm -rf $dir
		_notrun "kernel doesn't support renameat2 syscall"
	fi
	rm -rf $dir
}

# ---- common/attr

_require_attrs()
{
	local nsp args="$*"
	[ -n "$args" ] || args=user
	[ -n "$ATTR_PROG" ] || _notrun "attr command not found"
	[ -n "$GETFATTR_PROG" ] || _notrun "getfattr command not found"
	[ -n "$SETFATTR_PROG" ] || _notrun "setfattr command not found"
	for nsp in $args; do
		touch $TEST_DIR/syscalltest
		$SETFATTR_PROG -n "$nsp.xfstests" -v "attr" $TEST_DIR/syscalltest > $TEST_DIR/syscalltest.out 2>&1
		cat $TEST_DIR/syscalltest.out >> $seqres.full
		grep -q 'Function not implemented' $TEST_DIR/syscalltest.out &&
			_notrun "kernel does not support attrs"
		grep -q 'Operation not supported' $TEST_DIR/syscalltest.out &&
			_notrun "attr namespace $nsp not supported by this filesystem type: $FSTYP"
		rm -f $TEST_DIR/syscalltest.out
	done
}

_getfattr()
{
	local out
	out=$($GETFATTR_PROG "$@")
	local res=$?
	[ -n "$out" ] && echo "$out" | sed -e 's/=\"\"//'
	return $res
}

# ---- common/filter

_filter_touch() { sed -e "s/.* '\(.*\)':\(.*\)/touch: '\1':\2/"; }
_filter_lostfound() { sed -e '/^lost+found$/d'; }

# ---- common/casefold

_has_casefold_kernel_support() { test -f /sys/fs/$FSTYP/features/casefold; }

_require_scratch_casefold()
{
	_has_casefold_kernel_support || _notrun "$FSTYP does not support casefold feature"
	_scratch_mkfs_casefold >> $seqres.full 2>&1 ||
		_notrun "$FSTYP userspace tools do not support casefold"
	_try_scratch_mount >> $seqres.full 2>&1 ||
		_notrun "kernel can't mount filesystem with the encoding set by userspace"
	_scratch_unmount
	_require_command "$CHATTR_PROG" chattr
	_require_command "$LSATTR_PROG" lsattr
}

_scratch_mkfs_casefold()
{
	case $FSTYP in
	ext4) _scratch_mkfs -O casefold "$@" ;;
	f2fs) _scratch_mkfs -C utf8 "$@" ;;
	*) _notrun "Don't know how to mkfs with casefold support on $FSTYP" ;;
	esac
}

_scratch_mkfs_casefold_strict()
{
	case $FSTYP in
	ext4) _scratch_mkfs -O casefold -E encoding_flags=strict ;;
	f2fs) _scratch_mkfs -C utf8:strict ;;
	*) _notrun "Don't know how to mkfs with casefold-strict support on $FSTYP" ;;
	esac
}

_scratch_mount_casefold() { _scratch_mount; }
_scratch_mount_casefold_strict() { _scratch_mount; }

# Names as getdents() returns them (neither normalised nor casefolded).
_casefold_check_exact_name() { find ${1} | grep -q ${2}; }
_casefold_set_attr() { $CHATTR_PROG +F "${1}"; }
_casefold_unset_attr() { $CHATTR_PROG -F "${1}"; }
_casefold_lsattr_dir()
{
	if $LSATTR_PROG -ld "${1}" | grep -q Casefold; then
		echo "${1} Casefold"
	else
		echo "${1}"
	fi
}

# ---- common/f2fs

_require_scratch_f2fs_compression()
{
	_require_scratch
	[ -e /sys/fs/f2fs/features/compression ] || _notrun "Kernel doesn't support f2fs compression"
	_scratch_mkfs -O compression,extra_attr >> $seqres.full ||
		_notrun "f2fs-tools doesn't support compression"
	if [ -n "$1" ]; then
		_scratch_mount "-o compress_algorithm=$1" ||
			_notrun "Kernel doesn't support $1 compression algorithm for f2fs"
		_scratch_unmount
	fi
}

_require_inject_f2fs_command()
{
	_require_command "$F2FS_INJECT_PROG" inject.f2fs
	if [ $# -ne 2 ]; then
		echo "Usage: _require_inject_f2fs_command metaarea member" 1>&2
		_exit 1
	fi
	local val=
	case $1 in
	sb|cp|nat|sit) val=0 ;;
	ssa|node|dent) ;;
	*) _notrun "unsupport metaarea: $1" ;;
	esac
	$F2FS_INJECT_PROG "--$1" "$val" "-h" | grep "$2:" > /dev/null ||
		_notrun "--$1 --mb $2 support is missing"
}

# ---- common/verity (fs-verity is not modelled: the fsverity program is
# missing, and so is /sys/fs/$FSTYP/features/verity)

_require_scratch_verity()
{
	_require_scratch
	_require_command "$FSVERITY_PROG" fsverity
	[ -e /sys/fs/$FSTYP/features/verity ] ||
		_notrun "kernel $FSTYP isn't configured with verity support"
}

# ---- common/encrypt

_require_scratch_encryption()
{
	local arg
	_require_scratch
	_require_xfs_io_command "set_encpolicy"
	for arg; do
		case "$arg" in
		-s) _require_xfs_io_command "set_encpolicy" "-s" ;;
		esac
	done
	_exclude_scratch_mount_option "test_dummy_encryption"
	_scratch_mkfs_encrypted &>> $seqres.full ||
		_notrun "$FSTYP userspace tools do not support encryption"
	_try_scratch_mount &>> $seqres.full ||
		_notrun "kernel is unaware of $FSTYP encryption feature," \
			"or mkfs options are not compatible with encryption"
	mkdir $SCRATCH_MNT/tmpdir
	if _set_encpolicy $SCRATCH_MNT/tmpdir 2>&1 >> $seqres.full |
		grep -E -q 'Inappropriate ioctl for device|Operation not supported'; then
		_notrun "kernel does not support $FSTYP encryption"
	fi
	rmdir $SCRATCH_MNT/tmpdir
	[ $# -ne 0 ] && _require_encryption_policy_support $SCRATCH_MNT "$@"
	_scratch_unmount
}

_require_encryption_policy_support()
{
	local mnt=$1
	local dir=$mnt/tmpdir
	local args="" flags=0 version=1 c
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		-c|-n|-s) args="$args $1 $2" ;;
		-f) args="$args $1 $2"; flags=$2 ;;
		-v) args="$args $1 $2"; version=$2 ;;
		*) _fail "_require_encryption_policy_support: unrecognized option '$1'" ;;
		esac
		shift 2
	done
	args=${args# }
	echo "Checking whether kernel supports encryption policy: $args" >> $seqres.full
	if (( flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32) )); then
		_scratch_unmount
		_scratch_mkfs_stable_inodes_encrypted &>> $seqres.full
		_scratch_mount
	fi
	mkdir $dir
	local keyspec
	if (( version > 1 )); then
		_require_xfs_io_command "get_encpolicy" "-t"
		local output=$(_get_encpolicy $dir -t)
		if [ "$output" != "supported" ]; then
			[ "$output" = "unsupported" ] && _notrun "kernel does not support $FSTYP encryption v2 API"
			_fail "Unexpected output from 'get_encpolicy -t': $output"
		fi
		local raw_key=$(_generate_raw_encryption_key)
		keyspec=$(_add_enckey $mnt "$raw_key" | awk '{print $NF}')
	else
		_require_command "$KEYCTL_PROG" keyctl
		_init_session_keyring
		keyspec=$(_generate_session_encryption_key)
	fi
	if _set_encpolicy $dir $keyspec $args 2>&1 >> $seqres.full | grep -E -q 'Invalid argument'; then
		_notrun "kernel does not support encryption policy: '$args'"
	fi
	if ! echo foo > $dir/file; then
		_notrun "encryption policy '$args' is unusable; probably missing kernel crypto API support"
	fi
	(( version <= 1 )) && $KEYCTL_PROG clear $TEST_KEYRING_ID
	rm -r $dir
}

_require_scratch_inlinecrypt()
{
	_require_scratch
	_scratch_mkfs &>> $seqres.full
	_try_scratch_mount -o inlinecrypt &>> $seqres.full ||
		_notrun "filesystem doesn't support -o inlinecrypt"
}

_scratch_mkfs_encrypted()
{
	case $FSTYP in
	ext4|f2fs) _scratch_mkfs -O encrypt ;;
	*) _notrun "No encryption support for $FSTYP" ;;
	esac
}

_scratch_mkfs_sized_encrypted()
{
	case $FSTYP in
	ext4|f2fs) MKFS_OPTIONS="$MKFS_OPTIONS -O encrypt" _scratch_mkfs_sized "$@" ;;
	*) _notrun "Filesystem $FSTYP not supported in _scratch_mkfs_sized_encrypted" ;;
	esac
}

_scratch_mkfs_stable_inodes_encrypted()
{
	case $FSTYP in
	ext4) _scratch_mkfs -O encrypt -O stable_inodes || _notrun "-O stable_inodes is not supported" ;;
	*) _scratch_mkfs_encrypted ;;
	esac
}

# The keyring tests use: _init_session_keyring makes a keyring of their
# own in the session keyring.
_init_session_keyring()
{
	TEST_KEYRING_ID=$($KEYCTL_PROG newring xfstests @s)
	[ -n "$TEST_KEYRING_ID" ] || _fail "Failed to create test keyring in session keyring"
}

_check_session_keyring()
{
	[ -n "$TEST_KEYRING_ID" ] ||
		_fail "_init_session_keyring() must be called before using the test keyring"
}

# _num_to_hex VALUE NBYTES: VALUE as NBYTES little-endian \xHH escapes.
_num_to_hex()
{
	local value=$1 nbytes=$2 i
	for (( i = 0; i < nbytes; i++ )); do
		printf '\\x%02x' $(((value >> (8 * i)) & 0xff))
	done
}

_add_session_encryption_key()
{
	local keydesc=$1 raw=$2
	_check_session_keyring
	echo -n -e "$(_num_to_hex 0 4)${raw}$(_num_to_hex 64 4)" |
		$KEYCTL_PROG padd logon $(_get_fs_keyprefix):$keydesc $TEST_KEYRING_ID >> $seqres.full
}

_unlink_session_encryption_key()
{
	_check_session_keyring
	local keyid=$($KEYCTL_PROG search $TEST_KEYRING_ID logon $(_get_fs_keyprefix):$1)
	$KEYCTL_PROG unlink $keyid >> $seqres.full
}

_revoke_session_encryption_key()
{
	_check_session_keyring
	local keyid=$($KEYCTL_PROG search $TEST_KEYRING_ID logon $(_get_fs_keyprefix):$1)
	$KEYCTL_PROG revoke $keyid >> $seqres.full
}

_require_add_enckey_by_key_id()
{
	_require_xfs_io_command "add_enckey" "-k"
	if $XFS_IO_PROG -c "add_enckey -k 12345" "$1" 2>&1 | grep -q 'Invalid argument'; then
		_notrun "Kernel doesn't support key_id parameter to FS_IOC_ADD_ENCRYPTION_KEY"
	fi
}

# _add_fscrypt_provisioning_key DESC TYPE RAW: a key of type
# "fscrypt-provisioning" (struct fscrypt_provisioning_key_payload: le32
# type, le32 reserved, the raw key) in the test keyring; prints its ID.
_add_fscrypt_provisioning_key()
{
	_check_session_keyring
	echo -n -e "$(_num_to_hex $2 4)$(_num_to_hex 0 4)$3" |
		$KEYCTL_PROG padd fscrypt-provisioning "$1" $TEST_KEYRING_ID
}

FSCRYPT_MODE_AES_256_XTS=1
FSCRYPT_MODE_AES_256_CTS=4
FSCRYPT_MODE_AES_128_CBC=5
FSCRYPT_MODE_AES_128_CTS=6
FSCRYPT_MODE_ADIANTUM=9
FSCRYPT_MODE_AES_256_HCTR2=10
FSCRYPT_POLICY_FLAG_DIRECT_KEY=0x04
FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64=0x08
FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32=0x10
FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR=1
FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER=2

# ---- check's post-test steps

# _check_scratch_fs [DEV]: the filesystem on the scratch device passes
# its checker (e2fsck -nf, fsck.f2fs --dry-run), unmounted first.
_check_scratch_fs()
{
	local device=${1:-$SCRATCH_DEV}
	[ -n "$(_fs_type $device)" ] && _unmount $device
	case $FSTYP in
	f2fs)
		if ! $F2FS_FSCK_PROG --dry-run $device > $tmp.fsck.f2fs 2>&1; then
			_log_err "_check_f2fs_filesystem: filesystem on $device is inconsistent"
			echo "*** fsck.f2fs output ***" >> $seqres.full
			cat $tmp.fsck.f2fs >> $seqres.full
			echo "*** end fsck.f2fs output" >> $seqres.full
			rm -f $tmp.fsck.f2fs
			return 1
		fi
		rm -f $tmp.fsck.f2fs
		;;
	*)
		if ! fsck -t $FSTYP $FSCK_OPTIONS $device > $tmp.fsck 2>&1; then
			_log_err "_check_generic_filesystem: filesystem on $device is inconsistent"
			echo "*** fsck.$FSTYP output ***" >> $seqres.full
			cat $tmp.fsck >> $seqres.full
			echo "*** end fsck.$FSTYP output" >> $seqres.full
			rm -f $tmp.fsck
			return 1
		fi
		rm -f $tmp.fsck
		;;
	esac
	return 0
}
_check_test_fs() { _check_scratch_fs $TEST_DEV; }
_scratch_fsck() { _check_scratch_fs; }

# check's _check_filesystems: the test and scratch filesystems are
# checked when the test required them.
_check_filesystems()
{
	local ret=0
	if [ -f ${RESULT_DIR}/require_test ]; then
		_check_test_fs || ret=1
		rm -f ${RESULT_DIR}/require_test*
	else
		_test_unmount 2> /dev/null
	fi
	if [ -f ${RESULT_DIR}/require_scratch ]; then
		_check_scratch_fs || ret=1
		rm -f ${RESULT_DIR}/require_scratch*
	fi
	_scratch_unmount 2> /dev/null
	return $ret
}

# The kernel log from check's "run fstests SEQNUM at DATE_TIME" line on.
_dmesg_since_test_start()
{
	local mark="run fstests $seqnum at $date_time" line out= found=
	while IFS= read -r line; do
		case "$line" in
		*"$mark"*) out=; found=1 ;;
		esac
		[ -n "$found" ] && out="$out$line
"
	done <<EOF
$(dmesg)
EOF
	printf '%s' "$out"
}

_check_dmesg_for() { _dmesg_since_test_start | grep -E -q "$1"; }

_check_dmesg()
{
	_dmesg_since_test_start |
		grep -E -v -e "BUG: MAX_LOCKDEP_CHAIN_HLOCKS too low" \
			-e "BUG: MAX_STACK_TRACE_ENTRIES too low" > $seqres.dmesg
	if grep -E -q -e "kernel BUG at" -e "WARNING:" -e "\bBUG:" -e "Oops:" \
		-e "possible recursive locking detected" \
		-e "(INFO|ERR): suspicious RCU usage" \
		-e "INFO: possible circular locking dependency detected" \
		-e "general protection fault:" -e "BUG .* remaining" \
		-e "oom-kill" -e "UBSAN:" $seqres.dmesg; then
		echo "_check_dmesg: something found in dmesg (see $seqres.dmesg)"
		return 1
	fi
	[ "$KEEP_DMESG" = yes ] || rm -f $seqres.dmesg
	return 0
}

# ---- common/encrypt: ciphertext verification

_fscrypt_mode_name_to_num()
{
	case "$1" in
	AES-256-XTS) echo $FSCRYPT_MODE_AES_256_XTS ;;
	AES-256-CTS-CBC) echo $FSCRYPT_MODE_AES_256_CTS ;;
	AES-128-CBC-ESSIV) echo $FSCRYPT_MODE_AES_128_CBC ;;
	AES-128-CTS-CBC) echo $FSCRYPT_MODE_AES_128_CTS ;;
	Adiantum) echo $FSCRYPT_MODE_ADIANTUM ;;
	AES-256-HCTR2) echo $FSCRYPT_MODE_AES_256_HCTR2 ;;
	*) _fail "Unknown fscrypt mode: $1" ;;
	esac
}

# The nonce of inode $2 on device $1 (32 hex digits), from the encryption
# context the filesystem keeps: debugfs's ea_get on ext4, dump.f2fs on
# f2fs (the last 16 bytes of the context are the nonce).
_get_encryption_nonce()
{
	local device=$1 inode=$2 line ctx found=
	case $FSTYP in
	ext4)
		ctx=$($DEBUGFS_PROG $device -R "ea_get <$inode> c" 2>>$seqres.full | grep '^c ')
		ctx=${ctx#*=}
		ctx=$(echo "$ctx" | tr -d ' \n')
		echo "${ctx: -32}"
		;;
	f2fs)
		$DUMP_F2FS_PROG -i $inode $device | while read -r line; do
			case "$line" in
			*" e_name:c "*) found=1 ;;
			nonce:*)
				[ -n "$found" ] && echo "${line: -32}" && found= ;;
			*)
				if [ -n "$found" ] && [ -z "$(echo "$line" | tr -d 0-9A-Fa-f)" ]; then
					echo "${line: -32}"
					found=
				fi
				;;
			esac
		done
		;;
	*)
		_fail "_get_encryption_nonce() isn't implemented on $FSTYP"
		;;
	esac
}

_require_get_encryption_nonce_support()
{
	echo "Checking for _get_encryption_nonce() support for $FSTYP" >> $seqres.full
	case $FSTYP in
	ext4) _require_command "$DEBUGFS_PROG" debugfs ;;
	f2fs) _require_command "$DUMP_F2FS_PROG" dump.f2fs ;;
	*) _notrun "_get_encryption_nonce() isn't implemented on $FSTYP" ;;
	esac
}

# The on-disk (encrypted) name of inode $2 in directory $3 on device $1,
# in binary: debugfs's `ls -l -r` escapes bytes as \xHH; dump.f2fs shows
# i_name in f2fs-tools' base64.
_get_ciphertext_filename()
{
	local device=$1 inode=$2 dir_inode=$3 line
	case $FSTYP in
	ext4)
		$DEBUGFS_PROG $device -R "ls -l -r <$dir_inode>" 2>>$seqres.full | while read -r line; do
			case "$line" in
			"$inode "*)
				line=${line#* [0-9][0-9]:[0-9][0-9] }
				printf '%b' "$line"
				;;
			esac
		done
		;;
	f2fs)
		line=$($DUMP_F2FS_PROG $device -i $inode | grep '^i_name')
		line=${line##*[}
		_f2fs_base64_decode "${line%]}"
		;;
	*)
		_fail "_get_ciphertext_filename() isn't implemented on $FSTYP"
		;;
	esac
}

# Decodes f2fs-tools' base64 (A-Z a-z 0-9 + ,, six bits at a time from
# each byte's low bits up) to binary.
_f2fs_base64_decode()
{
	local s=$1 table="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+," \
		ac=0 bits=0 ch pre
	while [ -n "$s" ]; do
		ch=${s:0:1}
		s=${s:1}
		pre=${table%%"$ch"*}
		ac=$((ac + (${#pre} << bits)))
		bits=$((bits + 6))
		if ((bits >= 8)); then
			printf "\\x$(printf %02x $((ac & 255)))"
			ac=$((ac >> 8))
			bits=$((bits - 8))
		fi
	done
	((ac != 0)) && echo "Invalid base64-encoded string!" >&2
	return 0
}

_require_get_ciphertext_filename_support()
{
	echo "Checking for _get_ciphertext_filename() support for $FSTYP" >> $seqres.full
	case $FSTYP in
	ext4)
		_require_command "$DEBUGFS_PROG" debugfs
		_scratch_mount
		touch $SCRATCH_MNT/$'\xc1'
		_scratch_unmount
		if ! $DEBUGFS_PROG $SCRATCH_DEV -R "ls -l -r /" 2>&1 | tee -a $seqres.full |
			grep -E -q '\s+\\xc1\s*$'; then
			_notrun "debugfs (e2fsprogs) is too old; doesn't support showing unambiguous on-disk filenames"
		fi
		;;
	f2fs)
		_require_command "$DUMP_F2FS_PROG" dump.f2fs
		;;
	*)
		_notrun "_get_ciphertext_filename() isn't implemented on $FSTYP"
		;;
	esac
}

# The 512-byte blocks of the device that hold a file's data, comma
# separated, from xfs_io's fiemap.
_get_ciphertext_block_list()
{
	local file=$1 line first last b list=
	_sync_fs $file
	while read -r line; do
		case "$line" in
		[0-9]*": ["*"]: "[0-9]*..[0-9]*)
			line=${line##*: }
			first=${line%..*}
			last=${line#*..}
			for ((b = first; b <= last; b++)); do
				list="$list$b,"
			done
			;;
		esac
	done <<EOT
$($XFS_IO_PROG -c fiemap $file)
EOT
	echo "${list%,}"
}

_dump_ciphertext_blocks()
{
	local device=$1 block
	for block in $(echo $2 | tr ',' ' '); do
		dd if=$device bs=512 count=1 skip=$block status=none
	done
}

# _verify_ciphertext_for_encryption_policy CONTENTS_MODE FILENAMES_MODE
# [v2] [direct] [iv_ino_lblk_64] [iv_ino_lblk_32] [log2_dusize=N]
# [hw_wrapped_key]: files and names written under such a policy are
# stored as fscrypt-crypt-util computes them from the raw key, the nonce
# and the inode number.
_verify_ciphertext_for_encryption_policy()
{
	local cmode=$1 fmode=$2 opt version=1 flags=0 log2_dusize=0 hw=false
	local set_args="" util_args="" util_c_args="" util_f_args=""
	shift 2
	for opt; do
		case "$opt" in
		v2) version=2 ;;
		direct)
			[ $cmode = $fmode ] || _fail "For direct key mode, contents and filenames modes must match"
			(( flags |= FSCRYPT_POLICY_FLAG_DIRECT_KEY ))
			;;
		iv_ino_lblk_64) (( flags |= FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 )) ;;
		iv_ino_lblk_32) (( flags |= FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32 )) ;;
		log2_dusize=*) log2_dusize=${opt#log2_dusize=} ;;
		hw_wrapped_key)
			hw=true
			util_args+=" --enable-hw-kdf"
			util_c_args+=" --use-inlinecrypt-key"
			;;
		*) _fail "Unknown option '$opt' passed to _verify_ciphertext_for_encryption_policy" ;;
		esac
	done
	local cnum=$(_fscrypt_mode_name_to_num $cmode)
	local fnum=$(_fscrypt_mode_name_to_num $fmode)
	set_args+=" -c $cnum -n $fnum"
	(( log2_dusize != 0 )) && set_args+=" -s $log2_dusize"
	util_c_args+=" --mode-num=$cnum"
	util_f_args+=" --mode-num=$fnum"
	if (( version > 1 )); then
		set_args+=" -v 2"
		util_args+=" --kdf=HKDF-SHA512"
		if (( flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY )); then
			util_args+=" --direct-key"
		elif (( flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 )); then
			util_args+=" --iv-ino-lblk-64"
		elif (( flags & FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32 )); then
			util_args+=" --iv-ino-lblk-32"
		fi
	else
		(( flags & ~FSCRYPT_POLICY_FLAG_DIRECT_KEY )) && _fail "unsupported flags for v1 policy: $flags"
		if (( flags & FSCRYPT_POLICY_FLAG_DIRECT_KEY )); then
			util_args+=" --direct-key --kdf=none"
		else
			util_args+=" --kdf=AES-128-ECB"
		fi
	fi
	set_args=${set_args# }

	_require_scratch_encryption $set_args -f $flags
	$hw && _notrun "$SCRATCH_DEV doesn't support hardware-wrapped inline encryption keys"
	_require_test_program "fscrypt-crypt-util"
	_require_xfs_io_command "fiemap"
	_require_get_encryption_nonce_support
	_require_get_ciphertext_filename_support
	(( version == 1 )) && _require_command "$KEYCTL_PROG" keyctl

	echo "Creating encryption-capable filesystem" >> $seqres.full
	if (( flags & (FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32) )); then
		_scratch_mkfs_stable_inodes_encrypted &>> $seqres.full
	else
		_scratch_mkfs_encrypted &>> $seqres.full
	fi
	_scratch_mount
	if (( log2_dusize != 0 )); then
		util_c_args+=" --data-unit-size=$((1 << log2_dusize))"
	else
		util_c_args+=" --data-unit-size=$(_get_block_size $SCRATCH_MNT)"
	fi
	util_args+=" --fs-uuid=$(blkid -s UUID -o value $SCRATCH_DEV | tr -d -)"
	util_c_args+="$util_args"
	util_f_args+="$util_args"

	echo "Generating encryption key" >> $seqres.full
	local raw_key keyspec
	raw_key=$(_generate_raw_encryption_key)
	if (( version > 1 )); then
		keyspec=$(_add_enckey $SCRATCH_MNT "$raw_key" | awk '{print $NF}')
	else
		keyspec=$(_generate_key_descriptor)
		_init_session_keyring
		_add_session_encryption_key $keyspec $raw_key
	fi
	local raw_key_hex=$(echo "$raw_key" | tr -d '\\x')
	if (( version > 1 )); then
		echo "Verifying key identifier" >> $seqres.full
		local want=$($here/src/fscrypt-crypt-util --dump-key-identifier "$raw_key_hex" $util_args)
		if [ "$want" != "$keyspec" ]; then
			echo "KEY IDENTIFIER MISMATCH!"
			echo "    Expected: $want"
			echo "    Actual: $keyspec"
		fi
	fi

	echo
	echo -e "Verifying ciphertext with parameters:"
	echo -e "\tcontents_encryption_mode: $cmode"
	echo -e "\tfilenames_encryption_mode: $fmode"
	[ $# -ne 0 ] && echo -e "\toptions: $*"
	{
		echo "Full ciphertext verification parameters:"
		echo "  contents_encryption_mode = $cmode"
		echo "  filenames_encryption_mode = $fmode"
		echo "  policy_flags = $flags"
		echo "  set_encpolicy_args = $set_args"
		echo "  keyspec = $keyspec"
		echo "  raw_key_hex = $raw_key_hex"
		echo "  crypt_util_contents_args = $util_c_args"
		echo "  crypt_util_filename_args = $util_f_args"
	} >> $seqres.full
	_do_verify_ciphertext_for_encryption_policy "$cmode" "$fmode" "$flags" \
		"$set_args" "$keyspec" "$raw_key_hex" "$util_c_args" "$util_f_args"
}

_do_verify_ciphertext_for_encryption_policy()
{
	local cmode=$1 fmode=$2 flags=$3 set_args=$4 keyspec=$5 raw_key_hex=$6
	local ccmd="$here/src/fscrypt-crypt-util $7" fcmd="$here/src/fscrypt-crypt-util $8"
	local bs=$(_get_block_size $SCRATCH_MNT)
	local contents=() names=() i src dir dst inode blocks pad_flag pad dir_inode len name f nonce got

	echo "Creating files for contents verification" >> $seqres.full
	rm -f $tmp.testfile_*
	i=1
	for src in /dev/zero /dev/urandom; do
		head -c $((4 * bs)) $src > $tmp.testfile_$i
		(( i++ ))
	done
	dir=$SCRATCH_MNT/encdir
	mkdir $dir
	_set_encpolicy $dir $keyspec $set_args -f $flags
	for src in $tmp.testfile_*; do
		dst=$dir/${src##*.}
		touch $dst
		if lsattr $dst | grep -qE ".+c.+ $dst"; then
			chattr -c +m $dst
		fi
		cp $src $dst
		inode=$(stat -c %i $dst)
		blocks=$(_get_ciphertext_block_list $dst)
		contents+=("$src $inode $blocks")
	done

	echo "Creating files for filenames verification" >> $seqres.full
	for pad_flag in 0 1 2 3; do
		pad=$((4 << pad_flag))
		dir=$SCRATCH_MNT/encdir.pad$pad
		mkdir $dir
		dir_inode=$(stat -c %i $dir)
		_set_encpolicy $dir $keyspec $set_args -f $((flags | pad_flag))
		for len in 1 3 15 16 17 32 100 254 255; do
			name=$(tr -d -C a-zA-Z0-9 < /dev/urandom | head -c $len)
			touch $dir/$name
			inode=$(stat -c %i $dir/$name)
			names+=("$name $inode $dir_inode $pad")
		done
	done

	_scratch_unmount

	echo "Verifying encrypted file contents" >> $seqres.full
	for f in "${contents[@]}"; do
		read -r src inode blocks <<< "$f"
		nonce=$(_get_encryption_nonce $SCRATCH_DEV $inode)
		_dump_ciphertext_blocks $SCRATCH_DEV $blocks > $tmp.actual_contents
		$ccmd $cmode $raw_key_hex --file-nonce=$nonce --inode-number=$inode \
			< $src > $tmp.expected_contents
		cmp $tmp.expected_contents $tmp.actual_contents ||
			_fail "Expected encrypted contents != actual encrypted contents.  File: $f"
		$ccmd $cmode $raw_key_hex --decrypt --file-nonce=$nonce --inode-number=$inode \
			< $tmp.actual_contents > $tmp.decrypted_contents
		cmp $src $tmp.decrypted_contents ||
			_fail "Contents decryption sanity check failed.  File: $f"
	done

	echo "Verifying encrypted file names" >> $seqres.full
	for f in "${names[@]}"; do
		read -r name inode dir_inode pad <<< "$f"
		nonce=$(_get_encryption_nonce $SCRATCH_DEV $dir_inode)
		_get_ciphertext_filename $SCRATCH_DEV $inode $dir_inode > $tmp.actual_name
		echo -n "$name" | $fcmd $fmode $raw_key_hex --file-nonce=$nonce --padding=$pad \
			--data-unit-size=255 --inode-number=$dir_inode > $tmp.expected_name
		cmp $tmp.expected_name $tmp.actual_name ||
			_fail "Expected encrypted filename != actual encrypted filename.  File: $f"
		$fcmd $fmode $raw_key_hex --decrypt --file-nonce=$nonce --padding=$pad \
			--data-unit-size=255 --inode-number=$dir_inode \
			< $tmp.actual_name > $tmp.decrypted_name
		got=$(tr -d '\0' < $tmp.decrypted_name)
		[ "$name" = "$got" ] ||
			_fail "Filename decryption sanity check failed ($name != $got).  File: $f"
	done
}

# check's preparation of the test device: a filesystem of $FSTYP on
# $TEST_DEV (check makes it when it starts or when $FSTYP changes; each
# test's machine is new), mounted on $TEST_DIR, as init_rc mounts it.
_test_mkfs()
{
	case $FSTYP in
	ext2|ext3|ext4) $MKFS_EXT4_PROG -F $TEST_DEV ;;
	f2fs) $MKFS_F2FS_PROG -f $TEST_DEV ;;
	*) return 1 ;;
	esac
}

_vfslab_prepare_test_dev()
{
	if ! _test_mkfs > $tmp.err 2>&1; then
		echo "our local _test_mkfs routine ..."
		cat $tmp.err
		echo "check: failed to mkfs \$TEST_DEV using specified options"
		return 1
	fi
	rm -f $tmp.err
	if ! _test_mount; then
		echo "common/rc: could not mount $TEST_DEV on $TEST_DIR"
		return 1
	fi
}
