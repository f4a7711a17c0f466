package shell

import (
	"os"
	"strings"
	"testing"
)

// v1Session sets a v1 policy on $SCRATCH_MNT/d and pipes the struct
// fscrypt_key of TEST_RAW_KEY into keyctl padd logon; the case appends the
// description.
const v1Session = `_scratch_mkfs_encrypted; _scratch_mount; mkdir $SCRATCH_MNT/d; _set_encpolicy $SCRATCH_MNT/d $TEST_KEY_DESCRIPTOR; echo -ne "\x00\x00\x00\x00${TEST_RAW_KEY}\x40\x00\x00\x00" | keyctl padd logon`

func TestShellBehaviour(t *testing.T) {
	commands["__test_panic"] = func(*cmd) int { panic("boom") }
	cases := []struct {
		name, script string
		want         string // substring of the output
		status       int
	}{
		{"echo -ne combined", `echo -ne 'a\tb'; echo -en 'c\n'`, "a\tbc\n", 0},
		{"echo -n alone", `echo -n x; echo y`, "xy\n", 0},
		{"exec fd 3 holds a file", `echo hi > /tmp/f; exec 3</tmp/f; rm /tmp/f; ls /tmp; exec 3<&-; echo closed`, "closed\n", 0},
		{"command not found", `nosuchcmd arg`, "nosuchcmd: command not found\n", 127},
		{"cat enoent", `cat /tmp/missing`, "cat: /tmp/missing: No such file or directory\n", 1},
		{"usage status", `ls --bogus`, "Try 'ls --help' for more information.\n", 2},
		{"panic is recovered", `__test_panic; echo after`, "after\n", 0},
		{"redirect to the machine", `echo x > /tmp/vfslab-test-file; cat /tmp/vfslab-test-file`, "x\n", 0},
		{"test -e on the machine", `[ -d /mnt/scratch ] && echo yes`, "yes\n", 0},
		{"glob on the machine", `touch /tmp/a1 /tmp/a2; echo /tmp/a*`, "/tmp/a1 /tmp/a2\n", 0},
		{"command -v", `command -v xfs_io; command -v nosuch || echo none`, "/usr/bin/xfs_io\nnone\n", 0},
		{"source common is a no-op", `. ./common/rc; . ./common/encrypt; echo ok`, "ok\n", 0},
		{"drop_caches", `echo 3 > /proc/sys/vm/drop_caches && echo dropped`, "dropped\n", 0},
		{"sed filter", `echo /mnt/scratch/x | _filter_scratch`, "SCRATCH_MNT/x\n", 0},
		{"grep -c -v -x", `printf 'a\nb\na\n' | grep -c -x a; printf 'a\nb\n' | grep -v a`, "2\nb\n", 0},
		{"awk print field", `echo 'Added key with identifier abc' | awk '{print $NF}'`, "abc\n", 0},
		{"diff", `printf 'a\nb\n' > /tmp/x; printf 'a\nc\n' > /tmp/y; diff /tmp/x /tmp/y`, "2c2\n< b\n---\n> c\n", 1},
		{"umount busy", `_scratch_mkfs; _scratch_mount; cd $SCRATCH_MNT; umount $SCRATCH_MNT`, "umount: /mnt/scratch: target is busy.\n", 32},
		{"umount keeps files", `_scratch_mkfs; _scratch_mount; echo kept > $SCRATCH_MNT/f; _scratch_cycle_mount; cat $SCRATCH_MNT/f`, "kept\n", 0},
		{"mount without a filesystem", `mount /dev/vdc /mnt/test`, "wrong fs type", 32},
		{"head -N and tail -N", `seq 5 | head -2; seq 5 | tail -1`, "1\n2\n5\n", 0},
		{"dump a live ext4 directory", `_scratch_mkfs; _scratch_mount; mkdir $SCRATCH_MNT/d; touch $SCRATCH_MNT/d/a; dump $SCRATCH_MNT/d`, "\"a\"", 0},
		{"dump of memfs", `dump /tmp`, "dump: /tmp: not an ext4 or f2fs directory\n", 1},
		{"tmpfs has no fscrypt", `mkdir /tmp/e; xfs_io -c set_encpolicy /tmp/e; _add_enckey /tmp "$TEST_RAW_KEY"`, "/tmp/e: failed to set encryption policy: Inappropriate ioctl for device\nError adding encryption key: Inappropriate ioctl for device\n", 1},
		{"f2fs mount option", `mkfs.f2fs -O encrypt $SCRATCH_DEV; mount -o lookup_mode=bogus $SCRATCH_DEV $SCRATCH_MNT; dmesg | tail -1`, "Bad value for 'lookup_mode'", 0},
		{"trace", `trace on; stat -c %s /tmp >/dev/null; trace off`, "lstat(\"/tmp\") = 0\n", 0},
		{"fd 3 write", `exec 3>/tmp/w; echo via3 >&3; exec 3>&-; cat /tmp/w`, "via3\n", 0},
		{"sh -c", `sh -c 'echo $0 $1' name arg`, "name arg\n", 0},
		{"xargs", `printf '/tmp/x1\n/tmp/x2\n' | xargs touch; ls /tmp | grep -c '^x'`, "2\n", 0},
		{"umount with a file open", `_scratch_mkfs; _scratch_mount; echo x > $SCRATCH_MNT/f; exec 3<$SCRATCH_MNT/f; umount $SCRATCH_MNT; exec 3<&-; umount $SCRATCH_MNT && echo gone`, "umount: /mnt/scratch: target is busy.\ngone\n", 0},
		{"trace into a pipe whose reader makes syscalls", `trace on; seq 300 > /tmp/big; cat /tmp/big 2>&1 | xfs_io -f -c "pwrite 0 1" /tmp/p >/dev/null 2>&1; trace off; echo fine`, "fine\n", 0},
		{"chown lets a user set a policy", `_scratch_mkfs_encrypted; _scratch_mount; mkdir $SCRATCH_MNT/d; _user_do "xfs_io -c 'set_encpolicy 0000111122223333' $SCRATCH_MNT/d"; chown fsgqa $SCRATCH_MNT/d; stat -c %U $SCRATCH_MNT/d; _user_do "xfs_io -c 'set_encpolicy 0000111122223333' $SCRATCH_MNT/d" && echo set; su fsgqa -c "chown root $SCRATCH_MNT/d"`, "Permission denied\nfsgqa\nset\nchown: changing ownership of '/mnt/scratch/d': Operation not permitted\n", 1},
		{"v1 key in the session keyring by ext4's prefix, for every user", v1Session + ` ext4:$TEST_KEY_DESCRIPTOR @s >/dev/null; echo x > $SCRATCH_MNT/d/f && su fsgqa -c "cat $SCRATCH_MNT/d/f"`, "x\n", 0},
		{"v1 key by another filesystem's prefix", v1Session + ` f2fs:$TEST_KEY_DESCRIPTOR @s >/dev/null; echo x > $SCRATCH_MNT/d/f`, "/mnt/scratch/d/f: Required key not available\n", 1},
		{"v1 key too short", `_scratch_mkfs_encrypted; _scratch_mount; mkdir $SCRATCH_MNT/d; _set_encpolicy $SCRATCH_MNT/d $TEST_KEY_DESCRIPTOR; echo -ne "\x00\x00\x00\x00${TEST_RAW_KEY}\x10\x00\x00\x00" | keyctl padd logon fscrypt:$TEST_KEY_DESCRIPTOR @s >/dev/null; mkdir $SCRATCH_MNT/d/s; dmesg | tail -1`, "fscrypt: key with description 'fscrypt:0000111122223333' is too short (got 16 bytes, need 32+ bytes)\n", 0},
		{"v1 key revoked", v1Session + ` fscrypt:$TEST_KEY_DESCRIPTOR @s >/dev/null; echo x > $SCRATCH_MNT/d/f; keyctl revoke $(keyctl search @s logon fscrypt:$TEST_KEY_DESCRIPTOR); cat $SCRATCH_MNT/d/f; sync; echo 3 > /proc/sys/vm/drop_caches; ls $SCRATCH_MNT/d`, "x\nls: cannot open directory '/mnt/scratch/d': Key has been revoked\n", 2},
		{"new inodes are their creator's (memfs)", `mkdir /tmp/o; chown fsgqa /tmp/o; chmod 777 /tmp/o; touch /tmp/o/r; su fsgqa2 -c "touch /tmp/o/u"; stat -c '%n %u' /tmp/o/r /tmp/o/u`, "/tmp/o/r 0\n/tmp/o/u 1001\n", 0},
		{"new inodes are their creator's (ext4)", `_scratch_mkfs; _scratch_mount; chown fsgqa $SCRATCH_MNT; chmod 777 $SCRATCH_MNT; su fsgqa2 -c "mkdir $SCRATCH_MNT/d; ln -s x $SCRATCH_MNT/l"; touch $SCRATCH_MNT/r; stat -c '%n %u' $SCRATCH_MNT/d $SCRATCH_MNT/l $SCRATCH_MNT/r`, "/mnt/scratch/d 1001\n/mnt/scratch/l 1001\n/mnt/scratch/r 0\n", 0},
		{"new inodes are their creator's (f2fs)", `mkfs.f2fs $SCRATCH_DEV >/dev/null; _scratch_mount; chown fsgqa $SCRATCH_MNT; chmod 777 $SCRATCH_MNT; su fsgqa2 -c "touch $SCRATCH_MNT/u"; touch $SCRATCH_MNT/r; stat -c '%n %u' $SCRATCH_MNT/u $SCRATCH_MNT/r`, "/mnt/scratch/u 1001\n/mnt/scratch/r 0\n", 0},
		{"ro mount: EROFS for every write", `_scratch_mkfs >/dev/null; _scratch_mount; mkdir $SCRATCH_MNT/d; echo x > $SCRATCH_MNT/f; mount -o remount,ro $SCRATCH_MNT; touch $SCRATCH_MNT/g; echo y > $SCRATCH_MNT/f; cat $SCRATCH_MNT/f; rm $SCRATCH_MNT/f; mv $SCRATCH_MNT/f $SCRATCH_MNT/h; rmdir $SCRATCH_MNT/d; mkdir $SCRATCH_MNT/d; mkdir $SCRATCH_MNT/e; truncate -s 0 $SCRATCH_MNT/f; chown fsgqa $SCRATCH_MNT/f; ln -s a $SCRATCH_MNT/l; chattr +F $SCRATCH_MNT/d; ls $SCRATCH_MNT`,
			"touch: cannot touch '/mnt/scratch/g': Read-only file system\nsh: /mnt/scratch/f: Read-only file system\nx\nrm: cannot remove '/mnt/scratch/f': Read-only file system\nmv: cannot move '/mnt/scratch/f' to '/mnt/scratch/h': Read-only file system\nrmdir: failed to remove '/mnt/scratch/d': Read-only file system\nmkdir: cannot create directory '/mnt/scratch/d': File exists\nmkdir: cannot create directory '/mnt/scratch/e': Read-only file system\ntruncate: cannot open '/mnt/scratch/f' for writing: Read-only file system\nchown: changing ownership of '/mnt/scratch/f': Read-only file system\nln: failed to create symbolic link '/mnt/scratch/l': Read-only file system\nchattr: Read-only file system while setting flags on /mnt/scratch/d\nd\nf\n", 0},
		{"ro mount and remount,rw", `_scratch_mkfs >/dev/null; mount -o ro $SCRATCH_DEV $SCRATCH_MNT; grep scratch /proc/mounts; touch $SCRATCH_MNT/g; mount -o remount,noatime $SCRATCH_MNT; touch $SCRATCH_MNT/g; mount -o remount,rw $SCRATCH_MNT; touch $SCRATCH_MNT/g && grep scratch /proc/mounts`,
			"/dev/vdb /mnt/scratch ext4 ro,relatime 0 0\ntouch: cannot touch '/mnt/scratch/g': Read-only file system\ntouch: cannot touch '/mnt/scratch/g': Read-only file system\n/dev/vdb /mnt/scratch ext4 rw,relatime 0 0\n", 0},
		{"seq -f", `seq -f "/tmp/f%.0f" 2; seq -f '%03g' 9 10; seq -f x 1`, "/tmp/f1\n/tmp/f2\n009\n010\nseq: format 'x' has no % directive\n", 1},
		{"find -mindepth", `mkdir -p /tmp/m/a/b; touch /tmp/m/f; find /tmp/m -mindepth 1 | sort; find /tmp/m -mindepth 2 -maxdepth 2 -type d`, "/tmp/m/a\n/tmp/m/a/b\n/tmp/m/f\n/tmp/m/a/b\n", 0},
		{"_filter_stat", `echo "stat: cannot stat '/x': No such file or directory" | _filter_stat`, "stat: cannot statx '/x'", 0},
		{"src/renameat2", `touch /tmp/r1 /tmp/r2; $here/src/renameat2 -n /tmp/r1 /tmp/r2; $here/src/renameat2 -x /tmp/r1 /tmp/r2 && echo exchanged; $here/src/renameat2 -x /tmp/r1 /tmp/none; $here/src/renameat2 -q a b`,
			"File exists\nexchanged\nNo such file or directory\nusage: //src/renameat2 [-t] [-n|-x|-w] path1 path2\n", 1},
		{"ln -v", `touch /tmp/lv; ln -v /tmp/lv /tmp/lv2; ln -sv lv /tmp/lv3`, "'/tmp/lv2' => '/tmp/lv'\n'/tmp/lv3' -> 'lv'\n", 0},
		{"_filter_nokey_filenames replaces every name", `echo "mv: cannot move '/d/AbC-_,+1' to '/d/xyz': Required key not available" | _filter_nokey_filenames /d`, "'/d/NOKEY_NAME' to '/d/NOKEY_NAME'", 0},
		{"diff -r", `mkdir -p /tmp/A/s /tmp/B/s; echo 1 > /tmp/A/f; echo 1 > /tmp/B/f; diff -r /tmp/A /tmp/B && echo same; echo 2 > /tmp/B/s/g; echo x > /tmp/A/s/g; touch /tmp/A/only; mkdir /tmp/B/f2; touch /tmp/A/f2; diff -r /tmp/A /tmp/B`,
			"same\nFile /tmp/A/f2 is a regular file while file /tmp/B/f2 is a directory\nOnly in /tmp/A: only\ndiff -r /tmp/A/s/g /tmp/B/s/g\n1c1\n< x\n---\n> 2\n", 1},
		{"head -c of /dev/zero", `head -c 4 /dev/zero | tr '\0' y`, "yyyy", 0},
		{"xfs_io -t truncates", `echo abcdef > /tmp/t; xfs_io -t -c "pwrite 0 2" /tmp/t >/dev/null; stat -c %s /tmp/t`, "2\n", 0},
		{"xfs_io buffers and numbers", `cd /tmp; xfs_io -f -c "pwrite 0 1m" -c "pwrite -b 2b 0 0x10000" -c "pwrite 0 1x" -c "pwrite -b 0 0 1" -c "pwrite 0 0x1e" -c "pread -b 1s 0 2k" xf 2>&1 | grep -o "[0-9]* ops;\|non-numeric.*\|wrote.*\|read.*at"`,
			"wrote 1048576/1048576 bytes at offset 0\n256 ops;\nwrote 65536/65536 bytes at offset 0\n8 ops;\nnon-numeric length argument -- 1x\nwrote 0/1 bytes at offset 0\n0 ops;\nwrote 30/30 bytes at offset 0\n1 ops;\nread 2048/2048 bytes at\n4 ops;\n", 0},
		{"su uid", `su fsgqa -c 'id -u'`, "1000\n", 0},
		{"stat format", `touch /tmp/s; stat -c '%n %s %F %a %h %u' /tmp/s`, "/tmp/s 0 regular empty file 644 1 0\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, st := runScript(t, "", "-c", tc.script)
			if !strings.Contains(got, tc.want) || st != tc.status {
				t.Errorf("output %q status %d; want %q in it, status %d", got, st, tc.want, tc.status)
			}
		})
	}
}

// TestSeededURandom: /dev/urandom is one stream per machine from the seed.
func TestSeededURandom(t *testing.T) {
	const script = `head -c 8 /dev/urandom | od -An -tx1; dd if=/dev/urandom bs=4 count=1 status=none | od -An -tx1`
	a, _ := runScript(t, "", "--seed", "1", "-c", script)
	b, _ := runScript(t, "", "--seed", "1", "-c", script)
	c, _ := runScript(t, "", "--seed", "2", "-c", script)
	if a != b || a == c || len(a) < 30 {
		t.Fatalf("seed 1: %q, again: %q, seed 2: %q", a, b, c)
	}
}

func TestSyntaxErrorFileLine(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/bad.sh"
	if err := os.WriteFile(p, []byte("echo ok\nif then\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, st := runScript(t, "", p)
	if st != 2 || !strings.Contains(got, p+":2:") {
		t.Fatalf("got %q status %d; want %s:2: and status 2", got, st, p)
	}
}

func TestProcessSubstitutionRefused(t *testing.T) {
	got, st := runScript(t, "", "-c", "cat <(echo hi)")
	if st != 2 || !strings.Contains(got, "process substitution is not supported") {
		t.Fatalf("got %q status %d", got, st)
	}
}

// TestNoHostFiles checks that redirections and the shell's directory stay on
// the machine: a file the script writes under the host's temporary
// directory does not appear there.
func TestNoHostFiles(t *testing.T) {
	dir := t.TempDir()
	got, st := runScript(t, "", "-c", "mkdir -p "+dir+" && echo x > "+dir+"/leak && cd "+dir+" && pwd && ls")
	if st != 0 || !strings.Contains(got, dir+"\nleak\n") {
		t.Fatalf("got %q status %d", got, st)
	}
	if _, err := os.Stat(dir + "/leak"); err == nil {
		t.Fatal("the script wrote a file on the host")
	}
}

func TestMainUsage(t *testing.T) {
	if got, st := runScript(t, "", "--help"); st != 0 || !strings.Contains(got, "Usage: vfslab sh") {
		t.Fatalf("--help: %q %d", got, st)
	}
	if _, st := runScript(t, "", "--bogus"); st != 2 {
		t.Fatalf("--bogus: status %d, want 2", st)
	}
	if got, st := runScript(t, "", "--patches", "nosuch=x", "-c", "true"); st != 2 || !strings.Contains(got, "unknown patch") {
		t.Fatalf("--patches nosuch: %q %d", got, st)
	}
	if got, st := runScript(t, "echo from-stdin\n"); st != 0 || got != "from-stdin\n" {
		t.Fatalf("stdin script: %q %d", got, st)
	}
}
