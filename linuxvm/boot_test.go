package linuxvm

import (
	"context"
	"os"
	"strings"
	"testing"
)

// requireBoot skips unless $VFSLAB_LINUX asks for QEMU boots (.ci/run sets
// it) and the host has the kernel and tools.
func requireBoot(t *testing.T) *Host {
	t.Helper()
	if os.Getenv("VFSLAB_LINUX") == "" {
		t.Skip("linux: QEMU boots are off; set VFSLAB_LINUX=1 to run them")
	}
	h, err := Find("")
	if err != nil {
		t.Skip(err)
	}
	return h
}

// TestBoot boots the kernel with two scripts and checks what comes back:
// each script's output, status and dmesg, and the scratch device wiped
// between them.
func TestBoot(t *testing.T) {
	h := requireBoot(t)
	env := []string{"PATH=/usr/sbin:/usr/bin", "HOME=/root"}
	scripts := []Script{
		{Name: "one", Env: env, Args: []string{"a1"}, Source: []byte(`echo "hello $1 $(uname -r)"; echo err >&2
mkfs.ext4 -q -F /dev/vdb && mount /dev/vdb /mnt/scratch && echo data > /mnt/scratch/f && umount /mnt/scratch
blkid -o value -s TYPE /dev/vdb; exit 3`)},
		{Name: "two", Env: env, Source: []byte(`blkid /dev/vdb || echo wiped; preluded; lsmod | grep -c ext4`)},
	}
	run, err := h.Run(context.Background(), scripts, Options{
		Prelude:  []byte("preluded() { echo from the prelude; }\n"),
		CacheDir: t.TempDir(),
		Progress: func(s string) { t.Log(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := run.Results
	if r[0].Err != nil || r[1].Err != nil {
		t.Fatalf("no results: %v / %v", r[0].Err, r[1].Err)
	}
	if got := string(r[0].Stdout); got != "hello a1 "+h.Release+"\next4\n" || string(r[0].Stderr) != "err\n" || r[0].Status != 3 {
		t.Errorf("script one: stdout %q stderr %q status %d", got, r[0].Stderr, r[0].Status)
	}
	if !strings.Contains(string(r[0].Dmesg), "EXT4-fs (vdb): mounted filesystem") {
		t.Errorf("script one's dmesg lacks the mount: %q", r[0].Dmesg)
	}
	if got := string(r[1].Stdout); !strings.HasPrefix(got, "wiped\nfrom the prelude\n") || r[1].Status != 0 {
		t.Errorf("script two: stdout %q stderr %q status %d", got, r[1].Stderr, r[1].Status)
	}
	t.Logf("boot %.1f s, whole run %.1f s", run.Boots[0].BootTime.Seconds(), run.Boots[0].Elapsed.Seconds())
}
