package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/linuxdiff"
	"github.com/vfslab/vfslab/linuxvm"
	"github.com/vfslab/vfslab/shell"
)

// linuxFlags are the flags of vfslab linux run and diff.
type linuxFlags struct {
	kernel        string
	scriptTimeout time.Duration
	bootTimeout   time.Duration
	kvm           bool
	console       string
	cacheDir      string
	quiet         bool
	// diff only
	known    string
	record   string
	recorded string
}

func newLinuxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "linux",
		Short: "run vfslab sh scripts on the real Linux kernel under QEMU, and compare them with vfslab",
		Long: `The real Linux kernel is vfslab's oracle. 'vfslab linux run' boots it under
QEMU (TCG) with a small initramfs (the host's kernel from /boot, its
modules, busybox, bash, coreutils, xfs_io, keyctl, e2fsprogs, f2fs-tools,
kmod, dmsetup, and vfslab sh's prelude) and runs the scripts in one boot;
'vfslab linux diff' runs each script in vfslab sh too and compares.

A script says how it runs in its leading comment lines:
  # vfslab sh --fs f2fs --seed 3 --device vdb:256M
  # kernel: 6.12
(the filesystem of $FSTYP, the seed, the scratch devices' sizes; the kernel
version whose behaviour it assumes). Scratch devices are /dev/vdb../dev/vde,
sparse and 8 GiB unless a script sizes them, and are wiped between scripts.

The initramfs is built once into the cache directory and rebuilt when the
kernel, the tools or the prelude change. A boot takes 20-70 s under TCG.`,
		Args: noArgs,
		RunE: needSubcommand,
	}
	cmd.AddCommand(newLinuxRunCmd(), newLinuxDiffCmd(), newLinuxEventsCmd(), newLinuxImagesCmd())
	return cmd
}

func (f *linuxFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kernel, "kernel", "", "the kernel image (default $VFSLAB_LINUX_KERNEL, else the newest /boot/vmlinuz-*)")
	fl.DurationVar(&f.scriptTimeout, "timeout", 300*time.Second, "each script's time limit in the guest (1s..1h)")
	fl.DurationVar(&f.bootTimeout, "boot-timeout", 300*time.Second, "the time limit of a boot (10s..1h)")
	fl.BoolVar(&f.kvm, "kvm", false, "use KVM instead of TCG (on virtual hosts the guest may not boot under it)")
	fl.StringVar(&f.console, "console", "", "write the guest's console to FILE")
	fl.StringVar(&f.cacheDir, "cache-dir", "", "where the initramfs is kept (default the user's cache directory/vfslab/linux)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress lines on stderr")
}

func (f *linuxFlags) check() error {
	if f.scriptTimeout < time.Second || f.scriptTimeout > time.Hour {
		return usagef("--timeout %v: want 1s..1h", f.scriptTimeout)
	}
	if f.bootTimeout < 10*time.Second || f.bootTimeout > time.Hour {
		return usagef("--boot-timeout %v: want 10s..1h", f.bootTimeout)
	}
	return nil
}

// loadSpecs reads every script named (a usage error when one cannot be
// read or has a bad header).
func loadSpecs(paths []string) ([]*linuxdiff.Spec, error) {
	if len(paths) == 0 {
		return nil, usagef("want one or more SCRIPT files")
	}
	var specs []*linuxdiff.Spec
	for _, p := range paths {
		s, err := linuxdiff.Load(p)
		if err != nil {
			return nil, usagef("%v", err)
		}
		specs = append(specs, s)
	}
	return specs, nil
}

// options are the run's options from the flags; close closes the
// console file.
func (f *linuxFlags) options(stderr io.Writer) (opt linuxvm.Options, close func(), err error) {
	opt = linuxvm.Options{
		Prelude: []byte(shell.PreludeSource()), CacheDir: f.cacheDir,
		ScriptTimeout: f.scriptTimeout, BootTimeout: f.bootTimeout, KVM: f.kvm,
	}
	if !f.quiet {
		opt.Progress = func(s string) { fmt.Fprintln(stderr, s) }
	}
	close = func() {}
	if f.console != "" {
		c, err := os.Create(f.console)
		if err != nil {
			return opt, close, usagef("--console: %v", err)
		}
		opt.Console = c
		close = func() { c.Close() }
	}
	return opt, close, nil
}

// bootLinux runs the specs on Linux.
func (f *linuxFlags) bootLinux(ctx context.Context, specs []*linuxdiff.Spec, stderr io.Writer) (*linuxvm.Run, error) {
	h, err := linuxvm.Find(f.kernel)
	if err != nil {
		return nil, err
	}
	opt, closeConsole, err := f.options(stderr)
	if err != nil {
		return nil, err
	}
	defer closeConsole()
	scripts := make([]linuxvm.Script, len(specs))
	for i, s := range specs {
		scripts[i] = s.LinuxScript()
	}
	return h.Run(ctx, scripts, opt)
}

// kernelLine names the kernel and the boots.
func kernelLine(run *linuxvm.Run, kvm bool) string {
	accel := "TCG"
	if kvm {
		accel = "KVM"
	}
	var boots []string
	for _, b := range run.Boots {
		boots = append(boots, fmt.Sprintf("%.1f s", b.BootTime.Seconds()))
	}
	return fmt.Sprintf("linux %s, config %s; %d boot(s) under %s, booted in %s",
		run.Release, run.ConfigHash, len(run.Boots), accel, strings.Join(boots, ", "))
}

func newLinuxRunCmd() *cobra.Command {
	var f linuxFlags
	cmd := &cobra.Command{
		Use:   "run [flags] SCRIPT...",
		Short: "run scripts on the real Linux kernel and print what it printed",
		Long: `Boots the kernel once (once per distinct set of device sizes) with every
script and prints, for each, its standard output, standard error, exit
status and the kernel log lines it caused (dmesg, timestamps stripped).

Exit status: 0 when every script ran (whatever its own status); 1 when the
host lacks QEMU, the kernel or a tool (one line naming the packages), or a
script got no result; 2 for a usage error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			specs, err := loadSpecs(args)
			if err != nil {
				return err
			}
			run, err := f.bootLinux(cmd.Context(), specs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, kernelLine(run, f.kvm))
			failed := 0
			for i, r := range run.Results {
				fmt.Fprintf(w, "==> %s", specs[i].Path)
				if r.Err != nil {
					failed++
					fmt.Fprintf(w, ": %v\n", r.Err)
					continue
				}
				fmt.Fprintf(w, " (status %d, %.1f s)\n", r.Status, r.Elapsed.Seconds())
				for _, sec := range []struct {
					name string
					b    []byte
				}{{"stdout", r.Stdout}, {"stderr", r.Stderr}, {"dmesg", r.Dmesg}} {
					if len(sec.b) == 0 {
						continue
					}
					fmt.Fprintf(w, "--- %s\n%s", sec.name, sec.b)
					if sec.b[len(sec.b)-1] != '\n' {
						fmt.Fprintln(w)
					}
				}
			}
			if failed > 0 {
				return &statusError{status: 1, msg: fmt.Sprintf("%d of %d scripts got no result", failed, len(specs))}
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func newLinuxDiffCmd() *cobra.Command {
	var f linuxFlags
	cmd := &cobra.Command{
		Use:   "diff [flags] SCRIPT...",
		Short: "run scripts in vfslab sh and on Linux, and show where they differ",
		Long: `Runs each script in vfslab sh (with --as-linux: vfslab's own commands trace,
events, dump and patches say they are skipped, as on Linux) and on the real
kernel, normalises what must differ (no-key names and other nonces by count
and shape, UUIDs, key serials, bash's "SCRIPT: line N:" prefixes, fscrypt's
once-per-boot implementation lines), and prints a unified diff per script
of its standard output, standard error, exit status and kernel log
(vfslab's lines "-", Linux's "+"). Every hunk is matched against the known
differences (docs/LINUX-DIFFERENCES.md; --known FILE for another list):
each names its script, kernel version and hunk, which side is right and
why. The last line is the summary:

  linux: N scripts, I identical, K known differences, U unexplained

--record DIR keeps Linux's outputs (DIR/RELEASE/SCRIPT.json); --recorded
DIR compares with them instead of booting (a stale recording, of another
version of the script, is an error).

Exit status: 0 when nothing is unexplained; 1 when something is (or a
script got no result, or the host lacks what the run needs: one line
naming the packages); 2 for a usage error.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			if f.record != "" && f.recorded != "" {
				return usagef("--record and --recorded do not go together")
			}
			specs, err := loadSpecs(args)
			if err != nil {
				return err
			}
			known, err := linuxdiff.LoadKnown(f.known)
			if err != nil {
				return usagef("--known: %v", err)
			}
			return f.diff(cmd.Context(), specs, known, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.known, "known", "", "the known differences (JSON; default the built-in list)")
	fl.StringVar(&f.record, "record", "", "also write Linux's outputs under DIR")
	fl.StringVar(&f.recorded, "recorded", "", "compare with the outputs recorded under DIR instead of booting Linux")
	return cmd
}

func (f *linuxFlags) diff(ctx context.Context, specs []*linuxdiff.Spec, known []linuxdiff.Known, w, stderr io.Writer) error {
	linux := make([]linuxdiff.Output, len(specs))
	var release string
	if f.recorded != "" {
		rels := linuxdiff.Releases(f.recorded)
		if len(rels) != 1 {
			return usagef("--recorded %s: want one release recorded there, found %d (%s)", f.recorded, len(rels), strings.Join(rels, " "))
		}
		release = rels[0]
		var cfg string
		for i, s := range specs {
			r, err := linuxdiff.LoadRecorded(f.recorded, release, s)
			if err != nil {
				linux[i].Err = err
				continue
			}
			cfg = r.ConfigHash
			linux[i] = r.Output()
		}
		fmt.Fprintf(w, "linux %s, config %s; recorded in %s\n", release, cfg, f.recorded)
	} else {
		run, err := f.bootLinux(ctx, specs, stderr)
		if err != nil {
			return err
		}
		release = run.Release
		fmt.Fprintln(w, kernelLine(run, f.kvm))
		for i, r := range run.Results {
			linux[i] = linuxdiff.FromLinux(r)
			if f.record != "" && r.Err == nil {
				rec := linuxdiff.Recorded{Script: specs[i].Path, SHA256: linuxdiff.ScriptHash(specs[i].Source),
					Release: run.Release, ConfigHash: run.ConfigHash, Stdout: string(r.Stdout), Stderr: string(r.Stderr),
					Status: r.Status, Dmesg: string(r.Dmesg)}
				if err := linuxdiff.Save(f.record, rec); err != nil {
					return err
				}
			}
		}
	}
	var sum linuxdiff.Summary
	var cs []linuxdiff.Comparison
	var paths []string
	for i, s := range specs {
		if !f.quiet {
			fmt.Fprintf(stderr, "vfslab: [%d/%d] %s\n", i+1, len(specs), s.Path)
		}
		c := linuxdiff.Compare(s, s.RunVfslab(), linux[i], known, release)
		c.Print(w)
		sum.Add(c)
		cs = append(cs, c)
		paths = append(paths, s.Path)
	}
	for _, k := range linuxdiff.Unused(known, release, paths, cs) {
		fmt.Fprintf(w, "stale known difference %s: %s no longer shows its hunk\n", k.ID, k.Script)
	}
	fmt.Fprintln(w, sum)
	if sum.Unexplained > 0 {
		return &statusError{status: 1}
	}
	return nil
}

func newLinuxEventsCmd() *cobra.Command {
	var f linuxFlags
	cmd := &cobra.Command{
		Use:   "events [flags]",
		Short: "count events per operation on Linux (tracefs) and in vfslab on the seeds' small workloads",
		Long: `Runs the seeds' small workloads (creates in an encrypted casefolded f2fs
directory, cold opens of v1-encrypted files, open/close in a plain ext4
directory, cold reads of encrypted files) on Linux, counting with tracefs
(kprobes on the functions vfslab counts, kmem:kmalloc, kmem:kfree and
workqueue:workqueue_queue_work, filtered on the workload's shell with
set_event_pid and event-fork), and in vfslab sh with 'events', and prints
per operation: event, workload, Linux, vfslab. A function the kernel
inlines has no probe ("-").

Exit status: 0 when the table was printed; 1 when Linux could not run it;
2 for a usage error.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			var specs []*linuxdiff.Spec
			var vout strings.Builder
			for _, w := range linuxdiff.EventWorkloads {
				s, err := linuxdiff.Parse("events/"+w.Name+".sh", []byte(w.EventScript(true)))
				if err != nil {
					return err
				}
				specs = append(specs, s)
				var errb strings.Builder
				vs, _ := linuxdiff.Parse("events/"+w.Name+".sh", []byte(w.EventScript(false)))
				shell.Main([]string{"--fs", vs.Fs, "-c", string(vs.Source)}, strings.NewReader(""), &vout, &errb)
			}
			run, err := f.bootLinux(cmd.Context(), specs, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			var lout strings.Builder
			for i, r := range run.Results {
				if r.Err != nil {
					return fmt.Errorf("%s: %v", specs[i].Path, r.Err)
				}
				lout.Write(r.Stdout)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, kernelLine(run, f.kvm))
			linuxdiff.PrintEventTable(w, linuxdiff.EventTable(lout.String(), vout.String()))
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func newLinuxImagesCmd() *cobra.Command {
	var f linuxFlags
	var keep string
	cmd := &cobra.Command{
		Use:   "images [flags]",
		Short: "make ext4 and f2fs images on each side and read them on the other",
		Long: `Makes an encrypted, casefolded ext4 and f2fs image of 512 MiB on each side
(mkfs, then a tree under the xfstests key: files of several sizes, long and
non-ASCII names, symlinks, a hard link, a directory of 150 names) and reads
each on the other side: Linux's images attached to vfslab sh, vfslab's to
the guest after e2fsck -fn or fsck.f2fs --dry-run. The reader's listing
with the key (type, mode, size, link count, symlink target, md5 of every
file, lsattr flags, a casefolded lookup) must be the maker's, and without
the key the number of names, all in the no-key form. One boot.

Exit status: 0 when every image reads back the same and checks clean; 1
when one does not (or Linux could not run); 2 for a usage error.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			h, err := linuxvm.Find(f.kernel)
			if err != nil {
				return err
			}
			opt, closeConsole, err := f.options(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer closeConsole()
			rows, run, err := linuxdiff.CompareImages(cmd.Context(), h, linuxdiff.ImageOptions{Run: opt, Dir: keep})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, kernelLine(run, f.kvm))
			linuxdiff.PrintImages(w, rows)
			for _, r := range rows {
				if !r.OK() {
					return &statusError{status: 1}
				}
			}
			return nil
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&keep, "keep", "", "keep the four images in DIR (default a temporary directory, removed)")
	return cmd
}
