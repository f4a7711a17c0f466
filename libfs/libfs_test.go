package libfs_test

import (
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/memfs"
	"github.com/vfslab/vfslab/vfs"
)

// TestRegularFileNames: the shared glue traces under the filesystem's own
// kernel names and reads and writes through i_data; FlagsIoctl without
// flag operations answers FS_IOC_GETFLAGS with ENOTTY.
func TestRegularFileNames(t *testing.T) {
	k := kernel.New()
	tk := k.NewTask("libfs")
	_, p, err := memfs.Boot(tk, vfs.Config{}, &memfs.Options{TestFscrypt: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Exit(tk)
	tk.Tracer = &kernel.Tracer{}
	fd, err := p.Open(tk, "/f", vfs.O_RDWR|vfs.O_CREAT, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Write(tk, fd, []byte("hello")); n != 5 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	buf := make([]byte, 8)
	if n, err := p.Pread(tk, fd, buf, 0); n != 5 || err != nil || string(buf[:5]) != "hello" {
		t.Fatalf("pread: %d %q, %v", n, buf[:n], err)
	}
	var flags uint32
	if _, err := p.Ioctl(tk, fd, vfs.FS_IOC_GETFLAGS, &flags); err != errno.ENOTTY {
		t.Errorf("FS_IOC_GETFLAGS on memfs: %v, want ENOTTY", err)
	}
	p.Close(tk, fd)
	var b strings.Builder
	tk.Tracer.Print(&b, false)
	for _, fn := range []string{"memfs_file_open", "memfs_file_write_iter", "memfs_file_read_iter"} {
		if !strings.Contains(b.String(), fn) {
			t.Errorf("trace lacks %s:\n%s", fn, b.String())
		}
	}
}
