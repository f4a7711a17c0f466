package shell

import "testing"

// TestFaultInjectionFiles: the debugfs and procfs files of failslab and
// fail-nth read and parse as the kernel's do, and cache-filter limits the
// failures to the caches flagged in /sys/kernel/slab.
func TestFaultInjectionFiles(t *testing.T) {
	cases := []struct{ name, script, want string }{
		{"bools", `f=/sys/kernel/debug/failslab/cache-filter; echo y > $f; cat $f; echo off > $f; cat $f; echo 1 > $f; cat $f; echo maybe > $f; cat $f`,
			"Y\nN\nY\nsh: write error: Invalid argument\nY\n"},
		{"numbers", `d=/sys/kernel/debug/failslab; echo 0x20 > $d/interval; cat $d/interval; echo -1 > $d/times; cat $d/times; echo 4096 > $d/space; cat $d/space; echo -5 > $d/probability; cat $d/probability`,
			"32\n-1\n4096\nsh: write error: Invalid argument\n0\n"},
		{"fail-nth kstrtouint", `f=/proc/thread-self/fail-nth; echo 010 > $f; cat /proc/self/fail-nth; echo 4294967296 > $f; echo '' > $f; printf 7 > $f; cat $f; echo 0 > $f; cat $f`,
			"8\nsh: write error: Numerical result out of range\nsh: write error: Invalid argument\n7\n0\n"},
		{"cache-filter spares other caches", `_scratch_mkfs >/dev/null; _scratch_mount; d=/sys/kernel/debug/failslab; echo N > $d/ignore-gfp-wait; echo 0 > $d/verbose; echo Y > $d/cache-filter; echo 1 > /sys/kernel/slab/ext4_inode_cache/failslab; cat /sys/kernel/slab/ext4_inode_cache/failslab; echo 2 > /proc/self/fail-nth; mkdir $SCRATCH_MNT/a && echo "a: fail-nth left $(cat /proc/self/fail-nth)"; echo 0 > /proc/self/fail-nth; echo 100 > $d/probability; echo 1 > $d/times; mkdir $SCRATCH_MNT/b; ls $SCRATCH_MNT`,
			"1\na: fail-nth left 1\nmkdir: cannot create directory '/mnt/scratch/b': Cannot allocate memory\na\nlost+found\n"},
		{"listing and test", `ls /sys/kernel/debug/failslab | wc -l; [ -f /proc/self/fail-nth ] && [ -d /sys/kernel/debug ] && echo yes; ls /sys`, "7\nyes\nkernel\n"},
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
