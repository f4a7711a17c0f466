package teach

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
	"github.com/vfslab/vfslab/vfs"
)

// TestRecordOpenEveryFS records open("/secret/note") on each filesystem
// and checks the trace's shape, its return value and the perfetto export
// against the Trace Event Format.
func TestRecordOpenEveryFS(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		t.Run(fs, func(t *testing.T) {
			m, err := NewMachine(Config{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.DropCaches()
			r := m.Record(Open("/secret/note", vfs.O_RDONLY))
			if r.Err != nil || r.Ret < 0 {
				t.Fatalf("%s: %v", r.Result(), r.Err)
			}
			var text bytes.Buffer
			x := m.Export(r)
			if err := kernel.WriteTrace(&text, x, kernel.TraceText); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"do_sys_openat2", "fscrypt_file_open", "fs: " + fs} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("trace lacks %q:\n%s", want, text.String())
				}
			}
			var pf bytes.Buffer
			if err := kernel.WriteTrace(&pf, x, kernel.TracePerfetto); err != nil {
				t.Fatal(err)
			}
			if err := kernel.ValidatePerfetto(pf.Bytes()); err != nil {
				t.Fatalf("perfetto: %v", err)
			}
			// The same machine and call give the same trace: the clock is
			// modelled.
			m2, err := NewMachine(Config{FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			defer m2.Close()
			m2.DropCaches()
			var text2 bytes.Buffer
			kernel.WriteTrace(&text2, m2.Export(m2.Record(Open("/secret/note", vfs.O_RDONLY))), kernel.TraceText)
			if text.String() != text2.String() {
				t.Errorf("two recordings differ:\n%s\n%s", text.String(), text2.String())
			}
		})
	}
}

func TestNoKeyOpenIsENOKEY(t *testing.T) {
	m, err := NewMachine(Config{FS: "ext4", NoKey: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var names []string
	if r := m.Record(Getdents("/secret", &names)); r.Err != nil || len(names) != 1 || names[0] == "note" {
		t.Fatalf("getdents without the key: %v %q", r.Err, names)
	}
	r := m.Record(Open("/secret/"+names[0], vfs.O_RDONLY))
	if !errors.Is(r.Err, errno.ENOKEY) || r.Ret != -int64(errno.ENOKEY) {
		t.Fatalf("%s (ret %d)", r.Result(), r.Ret)
	}
	var b bytes.Buffer
	kernel.WriteTrace(&b, m.Export(r), kernel.TraceFtrace)
	if !strings.Contains(b.String(), "= -126 */") {
		t.Errorf("no retval on the syscall's closing line:\n%s", b.String())
	}
}

// TestMemfsHasNoSecrets: memfs is tmpfs, which has no fscrypt, so its
// machine holds the /tmp files and no encrypted directory; ext4, the
// default, holds /secret.
func TestMemfsHasNoSecrets(t *testing.T) {
	m, err := NewMachine(Config{FS: "memfs"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.HasFscrypt() {
		t.Error("memfs has fscrypt")
	}
	for _, p := range []string{"/secret", "/v1secret", "/cisecret"} {
		if r := m.Record(Stat(p)); !errors.Is(r.Err, errno.ENOENT) {
			t.Errorf("stat %s on memfs: %v, want ENOENT", p, r.Err)
		}
	}
	if r := m.Record(Stat("/tmp/hello")); r.Err != nil {
		t.Errorf("stat /tmp/hello: %v", r.Err)
	}
	d, err := NewMachine(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Cfg.FS != "ext4" || !d.HasFscrypt() {
		t.Errorf("default machine: %s, fscrypt %t", d.Cfg.FS, d.HasFscrypt())
	}
	if r := d.Record(Stat("/secret/note")); r.Err != nil {
		t.Errorf("stat /secret/note on the default machine: %v", r.Err)
	}
}

func TestUnknownFS(t *testing.T) {
	if _, err := NewMachine(Config{FS: "btrfs"}); !errors.Is(err, errno.ENODEV) {
		t.Fatalf("btrfs: %v", err)
	}
}

// TestReturnOnTheSyscall checks that the return value lands on the
// syscall's own closing line, and on none when several calls ran.
func TestReturnOnTheSyscall(t *testing.T) {
	m, err := NewMachine(Config{FS: "memfs"})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r := m.Record(Open("/tmp/hello", vfs.O_RDONLY))
	var tops []kernel.TraceEntry
	for _, e := range r.Tracer.Entries {
		if e.Kind == kernel.TraceExit && e.Depth == 0 {
			tops = append(tops, e)
		}
	}
	if len(tops) != 1 || tops[0].Func != "do_sys_openat2" || !tops[0].HasRet || tops[0].Ret != r.Ret {
		t.Errorf("top-level exits %+v, ret %d", tops, r.Ret)
	}
	var names []string
	r = m.Record(Getdents("/tmp", &names))
	for _, e := range r.Tracer.Entries {
		if e.Kind == kernel.TraceExit && e.Depth == 0 && e.HasRet {
			t.Errorf("%s got the listing's result %d", e.Func, e.Ret)
		}
	}
	if len(names) != 3 {
		t.Errorf("names %q", names)
	}
}

// TestV1SecretKeySetup: the machine's /v1secret/ has a v1 policy; after
// DropCachesAll an open of its file derives the per-file key
// (derive_key_aes in the trace), and without the keys the name is not
// found.
func TestV1SecretKeySetup(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		m, err := NewMachine(Config{FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		m.DropCachesAll()
		r := m.Record(Open("/v1secret/note", vfs.O_RDONLY))
		var text bytes.Buffer
		if err := kernel.WriteTrace(&text, m.Export(r), kernel.TraceText); err != nil {
			t.Fatal(err)
		}
		if r.Err != nil || r.Ret < 0 || !strings.Contains(text.String(), "derive_key_aes() {") {
			t.Errorf("%s: %s %v:\n%s", fs, r.Result(), r.Err, text.String())
		}
		m.Close()
		m, err = NewMachine(Config{FS: fs, NoKey: true})
		if err != nil {
			t.Fatal(err)
		}
		if r := m.Record(Open("/v1secret/note", vfs.O_RDONLY)); !errors.Is(r.Err, errno.ENOENT) {
			t.Errorf("%s without the key: %s %v", fs, r.Result(), r.Err)
		}
		m.Close()
	}
}

// TestCasefoldSecret: with the casefold feature, /cisecret is casefolded
// and encrypted on ext4 and f2fs, and its file is found in any case.
func TestCasefoldSecret(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		t.Run(fs, func(t *testing.T) {
			m, err := NewMachine(Config{FS: fs, Features: vfs.Features{Casefold: true}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			m.DropCachesAll()
			r := m.Record(Stat("/cisecret/NOTE.TXT"))
			if r.Err != nil {
				t.Fatalf("stat in another case: %v", r.Err)
			}
			if r := m.Record(Stat("/secret/NOTE")); r.Err == nil {
				t.Error("/secret is not casefolded, yet NOTE finds note")
			}
		})
	}
}
