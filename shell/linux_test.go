package shell

import "testing"

// TestAsLinux: what vfslab linux diff found different from Linux 6.12
// (and its tools: coreutils 9.1, util-linux 2.38, keyutils 1.6.3,
// e2fsprogs, mawk), each now as Linux prints it. The scenarios under
// scenarios/ run the same on both sides.
func TestAsLinux(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"ext4 lsattr shows the extents flag",
			`_scratch_mkfs_encrypted >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d $SCRATCH_MNT/e; touch $SCRATCH_MNT/d/f
_add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null; _set_encpolicy $SCRATCH_MNT/e $TEST_KEY_IDENTIFIER
lsattr -d $SCRATCH_MNT/d $SCRATCH_MNT/d/f $SCRATCH_MNT/e`,
			"--------------e------- /mnt/scratch/d\n--------------e------- /mnt/scratch/d/f\n---------E----e------- /mnt/scratch/e\n"},
		{"ext4 chattr +F keeps the extents flag",
			`mkfs.ext4 -q -O casefold $SCRATCH_DEV; _scratch_mount; mkdir $SCRATCH_MNT/c; chattr +F $SCRATCH_MNT/c; lsattr -d $SCRATCH_MNT/c`,
			"--------------e--F---- /mnt/scratch/c\n"},
		{"f2fs lsattr: I on new directories, N on new files, none on the root",
			`mkfs.f2fs -f -O encrypt,casefold -C utf8 $SCRATCH_DEV >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d $SCRATCH_MNT/c $SCRATCH_MNT/e
chattr +F $SCRATCH_MNT/c; touch $SCRATCH_MNT/f; _add_enckey $SCRATCH_MNT "$TEST_RAW_KEY" >/dev/null
_set_encpolicy $SCRATCH_MNT/e $TEST_KEY_IDENTIFIER; touch $SCRATCH_MNT/e/x
lsattr -d $SCRATCH_MNT $SCRATCH_MNT/c $SCRATCH_MNT/d $SCRATCH_MNT/e $SCRATCH_MNT/f $SCRATCH_MNT/e/x`,
			"---------------------- /mnt/scratch\n-----------I-----FN--- /mnt/scratch/c\n-----------I------N--- /mnt/scratch/d\n" +
				"---------E-I------N--- /mnt/scratch/e\n------------------N--- /mnt/scratch/f\n---------E------------ /mnt/scratch/e/x\n"},
		{"keyctl show: a logon key cannot be read, and keyctl 1.6.3's columns",
			`keyctl add user u p @s >/dev/null; echo -n x | keyctl padd logon fscrypt:0000111122223333 @s >/dev/null; keyctl show | sed 's/^ *[0-9][0-9]*/SERIAL/'`,
			"Session Keyring\nSERIAL --alswrv      0     0  keyring: _ses\nSERIAL --alswrv      0     0   \\_ user: u\n" +
				"SERIAL --alsw-v      0     0   \\_ logon: fscrypt:0000111122223333\n"},
		{"stat says cannot statx", `stat /nosuch`, "stat: cannot statx '/nosuch': No such file or directory\n"},
		{"ls sorts its operands, files first", `mkdir /tmp/b /tmp/a; touch /tmp/c /tmp/a/x; ls /tmp/b /tmp/c /tmp/a /tmp/a/x`,
			"/tmp/a/x\n/tmp/c\n\n/tmp/a:\nx\n\n/tmp/b:\n"},
		{"ls -U keeps them", `touch /tmp/c /tmp/a; ls -U /tmp/c /tmp/a`, "/tmp/c\n/tmp/a\n"},
		{"coreutils name files as quotearg does in the C locale", "stat /tmp/ma\u00f1ana; cat '/tmp/x y'; rm \"/tmp/it's\"",
			"stat: cannot statx '/tmp/ma'$'\\303\\261''ana': No such file or directory\ncat: '/tmp/x y': No such file or directory\n" +
				"rm: cannot remove \"/tmp/it's\": No such file or directory\n"},
		{"mv and ln look at a source that is not there", `touch /tmp/f; ln /tmp/nosuch /tmp/x; mv -T /tmp/nosuch /tmp/y; mv /tmp/f /tmp/nodir/x`,
			"ln: failed to access '/tmp/nosuch': No such file or directory\nmv: cannot stat '/tmp/nosuch': No such file or directory\n" +
				"mv: cannot move '/tmp/f' to '/tmp/nodir/x': No such file or directory\n"},
		{"xfs_io -f on a directory", `mkdir /tmp/d; xfs_io -f -c "pwrite 0 1" /tmp/d; echo $?`, "/tmp/d: Is a directory\n1\n"},
		{"readlink -e/-f/-m canonicalize", `cd /tmp; mkdir d; touch t; ln -s /tmp/d/../t l; ln -s nosuch m; readlink -e l; readlink -e m; echo $?; readlink -f m; readlink -m m/x/../y`,
			"/tmp/t\n1\n/tmp/nosuch\n/tmp/nosuch/y\n"},
		{"mv: one file twice, a directory into itself", `cd /tmp; touch a; ln a b; mkdir d; mv a b; mv d d`,
			"mv: 'a' and 'b' are the same file\nmv: cannot move 'd' to a subdirectory of itself, 'd/d'\n"},
		{"lsattr -l", `_scratch_mkfs >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d; lsattr -ld $SCRATCH_MNT/d`,
			"/mnt/scratch/d               Extents\n"},
		{"attr", `touch /tmp/f; attr -s a -V 1 /tmp/f; attr -q -g a /tmp/f; attr -g b /tmp/f`,
			"Attribute \"a\" set to a 1 byte value for /tmp/f:\n1\n1attr_get: No data available\nCould not get \"b\" for /tmp/f\n"},
		{"awk length", `echo "hello world" | awk '{print length($0), length, length($2)}'`, "11 11 5\n"},
		{"mount: already mounted on", `_scratch_mkfs >/dev/null; _scratch_mount; _scratch_mount`,
			"mount: /mnt/scratch: /dev/vdb already mounted on /mnt/scratch.\n       dmesg(1) may have more information after failed mount system call.\n"},
		{"ext4 logs its mounts and unmounts, drop_caches its writes", `_scratch_mkfs >/dev/null; _scratch_mount; umount $SCRATCH_MNT
echo 2 > /proc/sys/vm/drop_caches; echo 4 > /proc/sys/vm/drop_caches; echo 1 > /proc/sys/vm/drop_caches; dmesg | sed 's/[0-9a-f-]\{36\}/UUID/'`,
			"EXT4-fs (vdb): mounted filesystem UUID r/w with ordered data mode. Quota mode: none.\nEXT4-fs (vdb): unmounting filesystem UUID.\n" +
				"sh (1): drop_caches: 2\nsh (1): drop_caches: 4\n"},
	}
	v1 := `_scratch_mkfs_encrypted >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/v1; _set_encpolicy $SCRATCH_MNT/v1 $TEST_KEY_DESCRIPTOR
_add_session_encryption_key $TEST_KEY_DESCRIPTOR "$TEST_RAW_KEY"; mkdir $SCRATCH_MNT/v1/sub; echo data > $SCRATCH_MNT/v1/sub/f
_unlink_session_encryption_key $TEST_KEY_DESCRIPTOR; `
	cases = append(cases, []struct{ name, script, want string }{
		{"drop_caches keeps dirty inodes and their keys", v1 + `echo 3 > /proc/sys/vm/drop_caches; ls $SCRATCH_MNT/v1; cat $SCRATCH_MNT/v1/sub/f`,
			"sub\ndata\n"},
		{"after sync drop_caches evicts them", v1 + `sync; echo 3 > /proc/sys/vm/drop_caches; ls $SCRATCH_MNT/v1 | wc -l; cat $SCRATCH_MNT/v1/sub/f`,
			"1\ncat: /mnt/scratch/v1/sub/f: No such file or directory\n"},
		{"the flusher writes back inodes dirty for 30 s", v1 + `sleep 29; echo 3 > /proc/sys/vm/drop_caches; ls $SCRATCH_MNT/v1; sleep 2; echo 3 > /proc/sys/vm/drop_caches; ls $SCRATCH_MNT/v1 | grep -c sub`,
			"sub\n0\n"},
		{"mkfs.f2fs refuses an existing filesystem without -f, accepts extra_attr",
			`_scratch_mkfs >/dev/null; mkfs.f2fs -O encrypt $SCRATCH_DEV >/tmp/out; echo "status $?"; tail -2 /tmp/out; mkfs.f2fs -f -O extra_attr $SCRATCH_DEV >/dev/null; echo "status $?"`,
			"status 255\n\t/dev/vdb appears to contain an existing filesystem (ext4).\n\tUse the -f option to force overwrite.\nstatus 0\n"},
	}...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runScript(t, "", "-c", tc.script)
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
