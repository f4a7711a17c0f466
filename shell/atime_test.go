package shell

import "testing"

// TestAtime: relatime (the default) updates the atime of a read file only
// when it is not newer than mtime or ctime, or a day old; strictatime on
// every read once the clock moved; noatime and nodiratime never; each
// update dirties the inode (events), and writes and touch move mtime.
func TestAtime(t *testing.T) {
	const setup = `_scratch_mkfs >/dev/null; _scratch_mount; echo x > $SCRATCH_MNT/f; mkdir $SCRATCH_MNT/d; `
	cases := []struct{ name, script, want string }{
		{"frozen clock: nothing to update", setup + `cat $SCRATCH_MNT/f >/dev/null; events | grep -c atime_update`, "0\n"},
		{"relatime: first read after the write, not the second", setup +
			`sleep 10; events reset; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f; events | grep -E 'atime_update|mark_inode_dirty'; sleep 10; events reset; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f; events | grep -c atime_update`,
			"1767225610\natime_update 1\nmark_inode_dirty_sync 1\n1767225610\n0\n"},
		{"relatime: a day later", setup + `sleep 10; cat $SCRATCH_MNT/f >/dev/null; sleep 86400; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f`, "1767312010\n"},
		{"relatime: after a write", setup + `sleep 10; cat $SCRATCH_MNT/f >/dev/null; sleep 5; echo y >> $SCRATCH_MNT/f; stat -c '%Y %Z' $SCRATCH_MNT/f; sleep 5; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f`,
			"1767225615 1767225615\n1767225620\n"},
		{"strictatime", setup + `mount -o remount,strictatime $SCRATCH_MNT; sleep 1; cat $SCRATCH_MNT/f >/dev/null; sleep 1; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f`, "1767225602\n"},
		{"noatime", setup + `mount -o remount,noatime $SCRATCH_MNT; grep scratch /proc/mounts; sleep 1; cat $SCRATCH_MNT/f >/dev/null; ls $SCRATCH_MNT/d; stat -c %X $SCRATCH_MNT/f $SCRATCH_MNT/d`,
			"/dev/vdb /mnt/scratch ext4 rw,noatime 0 0\n1767225600\n1767225600\n"},
		{"nodiratime: files only", setup + `mount -o remount,nodiratime $SCRATCH_MNT; sleep 1; cat $SCRATCH_MNT/f >/dev/null; ls $SCRATCH_MNT/d; stat -c %X $SCRATCH_MNT/f $SCRATCH_MNT/d`,
			"1767225601\n1767225600\n"},
		{"readdir updates a directory's atime", setup + `sleep 3; ls $SCRATCH_MNT/d; stat -c %X $SCRATCH_MNT/d`, "1767225603\n"},
		{"lazytime dirties with I_DIRTY_TIME", setup + `mount -o remount,lazytime $SCRATCH_MNT; sleep 1; events reset; cat $SCRATCH_MNT/f >/dev/null; events | grep mark_inode`, "mark_inode_dirty_time 1\n"},
		{"read-only mount: no update", setup + `mount -o remount,ro $SCRATCH_MNT; sleep 1; cat $SCRATCH_MNT/f >/dev/null; stat -c %X $SCRATCH_MNT/f`, "1767225600\n"},
		{"a new entry moves the directory's mtime", setup + `sleep 7; touch $SCRATCH_MNT/d/n; stat -c '%Y %Z' $SCRATCH_MNT/d; date +%s`, "1767225607 1767225607\n1767225607\n"},
		{"touch and chmod", setup + `sleep 2; touch $SCRATCH_MNT/f; stat -c '%X %Y %Z' $SCRATCH_MNT/f; sleep 1; chmod 600 $SCRATCH_MNT/f; stat -c '%Y %Z' $SCRATCH_MNT/f`,
			"1767225602 1767225602 1767225602\n1767225602 1767225603\n"},
		{"sleep usage", `sleep; sleep x`, "sleep: missing operand\nTry 'sleep --help' for more information.\nsleep: invalid time interval 'x'\nTry 'sleep --help' for more information.\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := runScript(t, "", "-c", tc.script)
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestMknodCommands: mkfifo and mknod reach mknod(2) with coreutils'
// checks and messages; the FIFO and the device nodes are made by the
// filesystem's ->mknod (memfs's shmem_mknod) and listed as ls -l lists
// them; a device node needs CAP_MKNOD.
func TestMknodCommands(t *testing.T) {
	got, st := runScript(t, "", "-c", `mkfifo /tmp/f; mknod /tmp/p p 1 2; mknod /tmp/b b; mknod /tmp/x q; su fsgqa -c "mknod /tmp/c c 1 3"; mknod /tmp/r c x 1; mknod -m 600 /tmp/d b 8 1; mknod /tmp/big c 300 70000; ls -l /tmp/big /tmp/d /tmp/f`)
	want := "mknod: Fifos do not have major and minor device numbers.\nTry 'mknod --help' for more information.\n" +
		"mknod: missing operand after 'b'\nSpecial files require major and minor device numbers.\nTry 'mknod --help' for more information.\n" +
		"mknod: invalid device type 'q'\nTry 'mknod --help' for more information.\n" +
		"mknod: /tmp/c: Operation not permitted\n" +
		"mknod: invalid major device number 'x'\n" +
		"crw-r--r-- 1 root root 300, 70000 Jan  1 00:00 /tmp/big\n" +
		"brw------- 1 root root   8,     1 Jan  1 00:00 /tmp/d\n" +
		"prw-r--r-- 1 root root          0 Jan  1 00:00 /tmp/f\n"
	if got != want || st != 0 {
		t.Errorf("got %q status %d\nwant %q", got, st, want)
	}
}
