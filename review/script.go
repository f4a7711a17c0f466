package review

import (
	"fmt"
	"strings"

	"github.com/vfslab/vfslab/patch"
	"github.com/vfslab/vfslab/review/fault"
)

// Script renders a sequence as a `vfslab sh` script that replays it: the
// patch set, mkfs and mount of the scratch device, /d made as env says
// (chattr +F, the test key, the policy), then one command per step, with
// the injection (if any) named in a comment before its step (vfslab sh
// has no fault-injection files), and dmesg at the end, where the
// KASAN, BUG and WARN lines are. The shell's prelude defines
// $SCRATCH_DEV, $SCRATCH_MNT, $TEST_RAW_KEY, $TEST_KEY_IDENTIFIER and
// $TEST_KEY_DESCRIPTOR as xfstests' common/encrypt does; the machine's
// key is the same, and `vfslab sh --seed SEED` seeds the kernel's random
// source (file nonces) as the review's machine was.
func Script(env Env, set patch.Set, seed uint64, seq []Step, inject int, spec fault.Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# vfslab review reproducer: %s; run it with vfslab sh --seed %d FILE\n", env, seed)
	if ch := set.Changed(); ch != "" {
		fmt.Fprintf(&b, "patches %s\n", ch)
	}
	if env.EngineReqsize > 0 {
		fmt.Fprintf(&b, "# needs an asynchronous hardware crypto engine (reqsize %d), which vfslab sh cannot register: vfslab review --patches ... runs it\n", env.EngineReqsize)
	}
	mkfs := "mkfs.ext4 -q -F -O encrypt"
	if env.FS == "f2fs" {
		mkfs = "mkfs.f2fs -f -O encrypt"
	}
	if env.Casefold {
		if env.FS == "f2fs" {
			mkfs += ",casefold -C utf8"
		} else {
			mkfs += ",casefold"
		}
	}
	fmt.Fprintf(&b, "%s $SCRATCH_DEV >/dev/null\n", mkfs)
	if env.FS == "f2fs" {
		// As the review's machine: the seed's 6.16 lookup (no option,
		// falling back as auto does). Linux before 6.17 has no
		// lookup_mode= (its lookups are auto's) and refuses the
		// option: the script mounts again without it, as
		// examples/seed-001 does, so that it runs on both.
		b.WriteString("mount -o lookup_mode=auto $SCRATCH_DEV $SCRATCH_MNT 2>/dev/null || mount $SCRATCH_DEV $SCRATCH_MNT\n")
	} else {
		b.WriteString("mount $SCRATCH_DEV $SCRATCH_MNT\n")
	}
	b.WriteString("D=$SCRATCH_MNT/d\nmkdir $D\n")
	if env.Casefold {
		b.WriteString("chattr +F $D\n")
	}
	if env.Encrypt {
		if env.V1 {
			b.WriteString("_add_enckey $SCRATCH_MNT \"$TEST_RAW_KEY\" -d $TEST_KEY_DESCRIPTOR >/dev/null\n")
			b.WriteString("_set_encpolicy $D $TEST_KEY_DESCRIPTOR\n")
		} else {
			b.WriteString("_add_enckey $SCRATCH_MNT \"$TEST_RAW_KEY\" >/dev/null\n")
			b.WriteString("_set_encpolicy $D $TEST_KEY_IDENTIFIER\n")
		}
	}
	// Every step of the review is followed by a look at the namespace
	// and drop_caches (machine.observe).
	b.WriteString("observe() { ls -la $D $D/sub >/dev/null 2>&1; echo 2 > /proc/sys/vm/drop_caches; }\nobserve\n")
	for i, s := range seq {
		if i == inject && !spec.None() {
			// vfslab sh has no fault-injection files: the line
			// says what vfslab review armed.
			fmt.Fprintf(&b, "# the next command ran with %s (every allocation there fails with ENOMEM)\n", spec)
		}
		fmt.Fprintf(&b, "%s; observe\n", s.command(env))
	}
	b.WriteString("dmesg | grep -E 'KASAN|BUG|WARNING|DMA-API|kmemleak' || true\n")
	return b.String()
}

// shq quotes a path below $D for the shell.
func shq(rel string) string {
	if rel == "" {
		return "$D"
	}
	return "\"$D\"/'" + strings.ReplaceAll(rel, "'", `'\''`) + "'"
}

// command renders one step as the vfslab sh command that makes its
// syscalls (errors are printed, not fatal: a script goes on).
func (s Step) command(env Env) string {
	a, b := shq(s.A), shq(s.B)
	switch s.Op {
	case OpCreate:
		return "touch " + a
	case OpWrite:
		return fmt.Sprintf("xfs_io -f -c \"pwrite -S 0x%02x %d %d\" %s >/dev/null", s.Fill, s.Off, s.Len, a)
	case OpTruncate:
		return fmt.Sprintf("xfs_io -c \"truncate %d\" %s", s.Len, a)
	case OpRead:
		return "md5sum " + a
	case OpReadBio:
		return "md5sum " + a + " # readbio: vfslab review reads the blocks back through read bios (fscrypt_decrypt_bio)"
	case OpStat:
		return "stat -c '%F %h %s' " + a
	case OpGetdents:
		return "ls -a " + a
	case OpMkdir:
		return "mkdir " + a
	case OpRmdir:
		return "rmdir " + a
	case OpUnlink:
		return "rm " + a
	case OpLink:
		return "ln " + a + " " + b
	case OpRename:
		return "mv -T " + a + " " + b
	case OpAddKey:
		if env.V1 {
			return "_add_enckey $SCRATCH_MNT \"$TEST_RAW_KEY\" -d $TEST_KEY_DESCRIPTOR >/dev/null"
		}
		return "_add_enckey $SCRATCH_MNT \"$TEST_RAW_KEY\" >/dev/null"
	case OpRemoveKey:
		if env.V1 {
			return "_rm_enckey $SCRATCH_MNT $TEST_KEY_DESCRIPTOR"
		}
		return "_rm_enckey $SCRATCH_MNT $TEST_KEY_IDENTIFIER"
	case OpDropCaches:
		return "echo 2 > /proc/sys/vm/drop_caches"
	case OpCorruptContext:
		return "# " + s.String() + ": vfslab review rewrote the file's encryption context (an offline edit of the image) to name a second key; vfslab sh has no command that does"
	}
	return "# " + s.String()
}
