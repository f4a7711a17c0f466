package errno

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
)

func TestNames(t *testing.T) {
	for e, n := range names {
		if got := Name(e); got != n {
			t.Errorf("Name(%d) = %q, want %q", int(e), got, n)
		}
	}
	if got := Name(syscall.Errno(4000)); got != "E4000" {
		t.Errorf("Name(4000) = %q", got)
	}
}

// On Linux the model's values must be the host's, so that errors.Is works
// against the syscall package.
func TestMatchesHostOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("host errno values differ off Linux")
	}
	host := map[syscall.Errno]syscall.Errno{
		ENOENT: syscall.ENOENT, EEXIST: syscall.EEXIST, ENOKEY: syscall.ENOKEY,
		EUCLEAN: syscall.EUCLEAN, ENAMETOOLONG: syscall.ENAMETOOLONG,
		ENOTEMPTY: syscall.ENOTEMPTY, ELOOP: syscall.ELOOP, EXDEV: syscall.EXDEV,
		EINPROGRESS: syscall.EINPROGRESS, EKEYREVOKED: syscall.EKEYREVOKED,
		ECHILD: syscall.ECHILD, ESTALE: syscall.ESTALE,
	}
	for ours, h := range host {
		if ours != h {
			t.Errorf("%s = %d, host has %d", Name(ours), int(ours), int(h))
		}
	}
}

func TestOf(t *testing.T) {
	if e, ok := Of(fmt.Errorf("wrapped: %w", ENOKEY)); !ok || e != ENOKEY {
		t.Errorf("Of(wrapped ENOKEY) = %v, %v", e, ok)
	}
	if _, ok := Of(fmt.Errorf("plain")); ok {
		t.Error("Of(plain error) reported an errno")
	}
	if _, ok := Of(nil); ok {
		t.Error("Of(nil) reported an errno")
	}
}
