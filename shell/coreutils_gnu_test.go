package shell

import "testing"

// TestCoreutilsAgainstGNU runs commands no other test ran (cp, cut, uniq,
// tee, cmp, readlink, sha256sum, echo, egrep, env, basename, dirname,
// whoami) and compares their output with what GNU coreutils, grep and
// diffutils print for the same script under bash (recorded with env -i
// PATH=/usr/bin:/bin bash, in a directory of its own).
func TestCoreutilsAgainstGNU(t *testing.T) {
	const script = `cd /tmp
printf 'a b c\na b c\nd e f\n' > t1
cp t1 t2
cut -d' ' -f2 t1
uniq t1
uniq -c t1
uniq -d t1
echo hi | tee t3
cat t3
cmp t1 t2; echo "cmp $?"
ln -s t1 l1; readlink l1
printf 'abc' | sha256sum
sha256sum t1
echo -n one; echo " two"
egrep 'a|d' t1
env -i A=1 B=2 env
env -i A=1 B=2 env -u A
basename /a/b/c.txt .txt
basename /a/b/
dirname /a/b/c.txt
dirname c.txt
whoami
id -un
`
	const want = `b
b
e
a b c
d e f
      2 a b c
      1 d e f
a b c
hi
hi
cmp 0
t1
ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  -
66fb93bf1f326588dfbedb0ccf972da3d7f44c03d2d8c115056d321d23489701  t1
one two
a b c
a b c
d e f
A=1
B=2
B=2
c
b
/a/b
.
root
root
`
	out, st := runScript(t, "", "-c", script)
	if st != 0 || out != want {
		t.Errorf("status %d, output:\n%s\nwant (GNU):\n%s", st, out, want)
	}
}

// TestEnvRunsCommand: env runs the machine's command in the changed
// environment, and refuses what GNU env refuses.
func TestEnvRunsCommand(t *testing.T) {
	out, st := runScript(t, "", "-c", "env -i nosuch; echo $?; env -x; echo $?")
	want := "env: 'nosuch': No such file or directory\n127\nenv: invalid option -- 'x'\nTry 'env --help' for more information.\n125\n"
	if st != 0 || out != want {
		t.Errorf("status %d, output %q, want %q", st, out, want)
	}
}
