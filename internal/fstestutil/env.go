package fstestutil

import (
	"bufio"
	"encoding/hex"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// Env is a machine booted for a test, with a counting task and a process
// whose root is the filesystem under test.
type Env struct {
	TB testing.TB
	T  *kernel.Task
	P  *vfs.Proc
}

// Boot makes a kernel and a counting task named comm (ended when the test
// is), then boots the machine with boot (ext4.Boot, f2fs.Boot... with the
// test's options); a failure fails the test.
func Boot(tb testing.TB, comm string, boot func(t *kernel.Task) (*vfs.System, *vfs.Proc, error)) *Env {
	tb.Helper()
	k := kernel.New()
	t := k.NewTask(comm)
	t.EnableCounting()
	tb.Cleanup(t.Exit)
	_, p, err := boot(t)
	if err != nil {
		tb.Fatal(err)
	}
	return &Env{TB: tb, T: t, P: p}
}

// Must fails the test on an error.
func (e *Env) Must(err error) {
	e.TB.Helper()
	if err != nil {
		e.TB.Fatal(err)
	}
}

// Write creates or truncates path (mode 0600) and writes data to it in one
// write(2).
func (e *Env) Write(path, data string) {
	e.TB.Helper()
	fd, err := e.P.Open(e.T, path, vfs.O_CREAT|vfs.O_RDWR|vfs.O_TRUNC, 0o600)
	e.Must(err)
	if n, err := e.P.Write(e.T, fd, []byte(data)); err != nil || n != len(data) {
		e.TB.Fatalf("write %s: %d %v", path, n, err)
	}
	e.Must(e.P.Close(e.T, fd))
}

// Read returns the contents of path, read 3000 bytes at a time.
func (e *Env) Read(path string) (string, error) {
	fd, err := e.P.Open(e.T, path, vfs.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer e.P.Close(e.T, fd)
	var out []byte
	buf := make([]byte, 3000)
	for {
		n, err := e.P.Read(e.T, fd, buf)
		if err != nil {
			return "", err
		}
		if n == 0 {
			return string(out), nil
		}
		out = append(out, buf[:n]...)
	}
}

// List returns the names getdents64 lists in directory path ("." and ".."
// included), sorted.
func (e *Env) List(path string) []string {
	e.TB.Helper()
	fd, err := e.P.Open(e.T, path, vfs.O_RDONLY|vfs.O_DIRECTORY, 0)
	e.Must(err)
	defer e.P.Close(e.T, fd)
	var names []string
	buf := make([]byte, 512)
	for {
		n, err := e.P.Getdents64(e.T, fd, buf)
		e.Must(err)
		if n == 0 {
			break
		}
		ds, err := vfs.ParseDirents(buf[:n])
		e.Must(err)
		for _, d := range ds {
			names = append(names, d.Name)
		}
		if len(names) > 1<<17 {
			e.TB.Fatalf("listing %s never ends (stopped after %d names)", path, len(names))
		}
	}
	sort.Strings(names)
	return names
}

// ReadVectors returns the whitespace-separated fields of every line of the
// testdata file at path that is neither empty nor a comment (#); a file
// without any is a failure.
func ReadVectors(tb testing.TB, path string) [][]string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 64*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rows = append(rows, strings.Fields(line))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(rows) == 0 {
		tb.Fatalf("%s: no vectors", path)
	}
	return rows
}

// MustHex decodes hex digits, failing the test on bad input.
func MustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}
