package linuxdiff

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/vfslab/vfslab/linuxvm"
	"github.com/vfslab/vfslab/shell"
)

// imagesScript holds the functions both sides run (images/images.sh).
//
//go:embed images/images.sh
var imagesScript string

// ImageSize is the size of the images compared: 512 MiB, so that
// mke2fs.conf's "small" type (1 KiB blocks below 512 MiB) does not apply
// and both filesystems get 4 KiB blocks, as on xfstests' devices.
const ImageSize = 512 << 20

// ImageFilesystems are the filesystems whose images are compared.
var ImageFilesystems = []string{"ext4", "f2fs"}

// ImageRow is one image read by the side that did not make it.
type ImageRow struct {
	Fs       string
	MadeBy   string // "linux" or "vfslab"
	ReadBy   string
	Fsck     string // the reader's checker on the image before reading ("" when not run)
	FsckOK   bool
	Listing  string // "identical (N lines)" or the first differing line
	Listed   bool   // the listing with the key is identical
	NoKey    string
	NoKeyOK  bool
	Diff     string // the unified diff of what differed
	MakerErr string // the maker's standard error, when not empty
	// Each: both sides made an image from the same commands and listed
	// their own; the row compares the two listings.
	Each bool
}

// OK reports whether the reader saw what the maker saw and the checker
// found the image clean.
func (r ImageRow) OK() bool { return r.Listed && r.NoKeyOK && (r.Fsck == "" || r.FsckOK) }

// ImageOptions configure CompareImages.
type ImageOptions struct {
	Run linuxvm.Options
	// Dir keeps the four images ("" makes a temporary directory and
	// removes it).
	Dir string
}

// CompareImages makes an encrypted, casefolded ext4 and f2fs image on
// each side (mkfs, then img_make's tree under the xfstests key) and has
// the other side read it: Linux's images are attached to vfslab sh
// (--image, read-only), vfslab's to the guest (copy-on-write, after
// e2fsck -fn or fsck.f2fs --dry-run). A reader's listing (img_list) must
// be the maker's, byte for byte; without the key the same number of
// names, all in the no-key form. One boot does all of Linux's part.
func CompareImages(ctx context.Context, h *linuxvm.Host, opt ImageOptions) ([]ImageRow, *linuxvm.Run, error) {
	dir := opt.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "vfslab-images-")
		if err != nil {
			return nil, nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	img := func(side, fs string) string { return filepath.Join(dir, side+"-"+fs+".img") }

	// vfslab makes its images first: the guest reads them in the same boot
	// in which it makes its own.
	vMade := map[string]Output{}
	for _, fs := range ImageFilesystems {
		p := img("vfslab", fs)
		if err := sparseFile(p, ImageSize); err != nil {
			return nil, nil, err
		}
		vMade[fs] = runVfslab(fs, p, true, fmt.Sprintf("img_make %s /dev/vdb /mnt/scratch && img_list %s /dev/vdb /mnt/scratch\n", fs, fs))
	}

	// Linux: make ext4 on vdb and f2fs on vdc (kept), read vfslab's from
	// vdd and vde.
	var src strings.Builder
	src.WriteString(imagesScript)
	makeDev := map[string]string{"ext4": "vdb", "f2fs": "vdc"}
	readDev := map[string]string{"ext4": "vdd", "f2fs": "vde"}
	for _, fs := range ImageFilesystems {
		fmt.Fprintf(&src, "echo '=== make %s'\nimg_make %s /dev/%s /mnt/scratch && img_list %s /dev/%s /mnt/scratch\n", fs, fs, makeDev[fs], fs, makeDev[fs])
	}
	for _, fs := range ImageFilesystems {
		check := "e2fsck -fn /dev/" + readDev[fs]
		if fs == "f2fs" {
			check = "fsck.f2fs --dry-run /dev/" + readDev[fs]
		}
		fmt.Fprintf(&src, "echo '=== read %s'\n%s >/tmp/fsck.out 2>&1; st=$?\necho \"fsck status $st\"\n[ $st = 0 ] || tail -20 /tmp/fsck.out\nimg_list %s /dev/%s /mnt/scratch\n", fs, check, fs, readDev[fs])
	}
	script := linuxvm.Script{
		Name:   "images",
		Source: []byte(src.String()),
		Env:    append(shell.ScriptEnv("ext4", 0), "TMPDIR=/tmp", "VFSLAB_OWN_SKIP=1"),
		Disks:  map[string]int64{"vdb": ImageSize, "vdc": ImageSize},
		Images: map[string]string{"vdd": img("vfslab", "ext4"), "vde": img("vfslab", "f2fs")},
		Keep:   map[string]string{"vdb": img("linux", "ext4"), "vdc": img("linux", "f2fs")},
	}
	// Two mkfs and four listings in one script: more than a scenario's
	// time under a loaded host's emulation.
	if opt.Run.ScriptTimeout < 15*time.Minute {
		opt.Run.ScriptTimeout = 15 * time.Minute
	}
	run, err := h.Run(ctx, []linuxvm.Script{script}, opt.Run)
	if err != nil {
		return nil, run, err
	}
	res := run.Results[0]
	if res.Err != nil {
		return nil, run, res.Err
	}
	sections := splitSections(string(res.Stdout))

	var rows []ImageRow
	for _, fs := range ImageFilesystems {
		// Linux made it, vfslab reads it.
		lMade := sections["make "+fs]
		r := ImageRow{Fs: fs, MadeBy: "linux", ReadBy: "vfslab"}
		if fileExists(img("linux", fs)) {
			vRead := runVfslab(fs, img("linux", fs), false, fmt.Sprintf("img_list %s /dev/vdb /mnt/scratch\n", fs))
			compareListings(&r, lMade, vRead.Stdout)
			if vRead.Stderr != "" {
				r.Diff += "vfslab's standard error:\n" + vRead.Stderr
			}
		} else {
			r.Listing = "no image came back from the guest"
		}
		if len(res.Stderr) > 0 {
			r.MakerErr = string(res.Stderr)
		}
		rows = append(rows, r)

		// vfslab made it, Linux reads it.
		r = ImageRow{Fs: fs, MadeBy: "vfslab", ReadBy: "linux"}
		lRead := sections["read "+fs]
		fsckLine, rest, _ := strings.Cut(lRead, "\n")
		checker := "e2fsck -fn"
		if fs == "f2fs" {
			checker = "fsck.f2fs"
		}
		r.Fsck = checker + " " + strings.TrimPrefix(fsckLine, "fsck status ")
		r.FsckOK = fsckLine == "fsck status 0"
		if !r.FsckOK {
			// The checker's own lines precede the listing.
			r.Diff += "the checker said:\n" + rest
		}
		compareListings(&r, vMade[fs].Stdout, rest)
		r.MakerErr = vMade[fs].Stderr
		rows = append(rows, r)

		// Each made its own from the same commands: the two trees.
		r = ImageRow{Fs: fs, MadeBy: "linux", ReadBy: "vfslab", Each: true}
		compareListings(&r, lMade, vMade[fs].Stdout)
		rows = append(rows, r)
	}
	return rows, run, nil
}

// runVfslab runs the image functions and cmd in vfslab sh with image
// attached as /dev/vdb.
func runVfslab(fs, image string, writable bool, cmd string) Output {
	args := []string{"--as-linux", "--fs", fs, "--image", image + ":/dev/vdb"}
	if writable {
		args = append(args, "--writable")
	}
	args = append(args, "-c", imagesScript+cmd)
	var out, errb bytes.Buffer
	st, _ := shell.Run(args, strings.NewReader(""), &out, &errb)
	return Output{Stdout: out.String(), Stderr: errb.String(), Status: st}
}

// splitSections splits the guest's output at its "=== NAME" lines.
func splitSections(s string) map[string]string {
	m := map[string]string{}
	name := ""
	var b strings.Builder
	flush := func() {
		if name != "" {
			m[name] = b.String()
		}
		b.Reset()
	}
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "=== ") {
			flush()
			name = strings.TrimSpace(strings.TrimPrefix(l, "=== "))
			continue
		}
		b.WriteString(l)
	}
	flush()
	return m
}

// compareListings sets the row's listing and no-key verdicts from the
// maker's and the reader's img_list output (the fsck lines of a read
// section, which come first, are not part of the listing).
func compareListings(r *ImageRow, maker, reader string) {
	split := func(s string) (list, nokey []string) {
		for _, l := range strings.SplitAfter(s, "\n") {
			switch {
			case l == "":
			case strings.HasPrefix(l, "no key: "):
				nokey = append(nokey, l)
			default:
				list = append(list, l)
			}
		}
		return
	}
	ml, mn := split(maker)
	rl, rn := split(reader)
	if r.Fsck != "" && !r.FsckOK {
		// Drop the checker's tail: the listing starts at ".".
		for i, l := range rl {
			if strings.HasPrefix(l, ". ") {
				rl = rl[i:]
				break
			}
		}
	}
	udiff := func(a, b []string, what string) string {
		d, _ := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: a, B: b,
			FromFile: r.MadeBy + " (made it)", ToFile: r.ReadBy + " (read it)", Context: 2})
		return what + ":\n" + d
	}
	r.Listed = len(ml) > 0 && strings.Join(ml, "") == strings.Join(rl, "")
	if r.Listed {
		r.Listing = fmt.Sprintf("identical (%d lines)", len(ml))
	} else {
		r.Listing = fmt.Sprintf("differs (%d lines against %d)", len(ml), len(rl))
		r.Diff += udiff(ml, rl, "listing")
	}
	r.NoKeyOK = len(mn) > 0 && strings.Join(mn, "") == strings.Join(rn, "")
	if r.NoKeyOK {
		r.NoKey = fmt.Sprintf("identical (%d directories)", len(mn))
	} else {
		r.NoKey = "differs"
		r.Diff += udiff(mn, rn, "without the key")
	}
}

// PrintImages writes the image table and, under it, what differed.
func PrintImages(w io.Writer, rows []ImageRow) {
	fmt.Fprintf(w, "images: %d MiB, encrypted (v2, AES-256-XTS/CTS) and casefolded (utf8), under the xfstests key\n", ImageSize>>20)
	fmt.Fprintf(w, "%-5s %-8s %-8s %-14s %-28s %s\n", "fs", "made by", "read by", "checker (exit)", "listing with the key", "without the key")
	for _, r := range rows {
		fsck := r.Fsck
		if fsck == "" {
			fsck = "-"
		}
		made, read := r.MadeBy, r.ReadBy
		if r.Each {
			made, read = "each", "its own"
		}
		fmt.Fprintf(w, "%-5s %-8s %-8s %-14s %-28s %s\n", r.Fs, made, read, fsck, r.Listing, r.NoKey)
	}
	for _, r := range rows {
		if r.OK() && r.MakerErr == "" {
			continue
		}
		if r.Each {
			fmt.Fprintf(w, "\n--- %s made and listed by each side (- linux, + vfslab)\n", r.Fs)
		} else {
			fmt.Fprintf(w, "\n--- %s made by %s, read by %s\n", r.Fs, r.MadeBy, r.ReadBy)
		}
		if r.MakerErr != "" {
			fmt.Fprintf(w, "the maker's standard error:\n%s", r.MakerErr)
		}
		fmt.Fprint(w, r.Diff)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// sparseFile makes a file of size bytes with no blocks.
func sparseFile(p string, size int64) error {
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
