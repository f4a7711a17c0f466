package shell

import (
	"strings"
	"testing"
)

// TestXattrCommands: setfattr and getfattr as attr 2.5 has them: the value
// encodings both ways (text, 0x hex, 0s base64), attr's quoting of
// backslashes and reserved characters, the default ^user\. match and -m -,
// --only-values, base64 for a value more than an eighth unprintable, -n's "PATH: NAME: No such attribute" without the program's
// name, the leading '/' warning (once), exit statuses 1 and 2, and
// --restore of getfattr -d's output.
func TestXattrCommands(t *testing.T) {
	got, st := runScript(t, "", "-c", `cd /tmp; touch f g
setfattr -n user.text -v 'a"b\c' f
setfattr -n user.hex -v 0x00ff10 f
setfattr -n user.b64 -v 0sAAEC f
setfattr -n 'user.back\134slash' -v q f
setfattr -n user.nl -v '"one\012two"' f
setfattr -n trusted.t -v t f
getfattr -d f
getfattr -d -m - -e hex f
getfattr --only-values -n user.text f; echo
getfattr -n user.none f; echo "st=$?"
getfattr -d /tmp/f /tmp/g >/dev/null
getfattr -d f | sed 's/# file: f/# file: g/' > /tmp/dump; setfattr --restore=/tmp/dump; getfattr -d g | wc -l
setfattr -v 1 f; echo "st=$?"
setfattr -n user.bad -v 0xf f; echo "st=$?"
setfattr -x user.hex -x user.b64 f; echo "st=$?"`)
	want := `# file: f
user.b64=0sAAEC
user.back\134slash="q"
user.hex=0sAP8Q
user.nl=0sb25lCnR3bw==
user.text="a\"b\\c"

# file: f
trusted.t=0x74
user.b64=0x000102
user.back\134slash=0x71
user.hex=0x00ff10
user.nl=0x6f6e650a74776f
user.text=0x6122625c63

a"b\c
f: user.none: No such attribute
st=1
getfattr: Removing leading '/' from absolute path names
7
Usage: setfattr {-n name} [-v value] [-h] file...
       setfattr {-x name} [-h] file...
Try ` + "`setfattr --help'" + ` for more information.
st=2
bad input encoding
st=1
Usage: setfattr {-n name} [-v value] [-h] file...
       setfattr {-x name} [-h] file...
Try ` + "`setfattr --help'" + ` for more information.
st=2
`
	if got != want || st != 0 {
		t.Errorf("got status %d\n%s\nwant\n%s", st, got, want)
		for i, l := range strings.Split(got, "\n") {
			if w := strings.Split(want, "\n"); i >= len(w) || w[i] != l {
				t.Errorf("first difference at line %d: %q", i+1, l)
				break
			}
		}
	}
}

// TestDevAndBindCommands: the machine's /dev as ls -l lists it (major,
// minor), mount --bind and mount -o remount,ro,bind with /proc/mounts and
// EROFS through the read-only bind only, and umount of the bind.
func TestDevAndBindCommands(t *testing.T) {
	got, st := runScript(t, "", "-c", `ls -l /dev | grep -E ' (null|vdb)$'
mkfs.ext4 -q /dev/vdb && mount /dev/vdb /mnt/scratch && mkdir /mnt/scratch/b
mount --bind /mnt/scratch /mnt/scratch/b && mount -o remount,ro,bind /mnt/scratch/b
grep scratch /proc/mounts
touch /mnt/scratch/b/x; touch /mnt/scratch/y && echo rw
umount /mnt/scratch/b && umount /mnt/scratch && grep -c scratch /proc/mounts`)
	want := `crw-rw-rw- 1 root root   1,  3 Jan  1 00:00 null
brw-rw---- 1 root disk 254, 16 Jan  1 00:00 vdb
/dev/vdb /mnt/scratch ext4 rw,relatime 0 0
/dev/vdb /mnt/scratch/b ext4 ro,relatime 0 0
touch: cannot touch '/mnt/scratch/b/x': Read-only file system
rw
0
`
	if got != want || st != 1 {
		t.Errorf("got status %d\n%s\nwant\n%s", st, got, want)
	}
}
