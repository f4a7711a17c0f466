package main

import (
	"bytes"
	"github.com/vfslab/vfslab/kernel"
	"strings"
	"testing"
)

func trace(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := run(append([]string{"trace"}, args...), &out, &errb)
	return out.String(), errb.String(), rc
}

// TestTraceOpenGolden pins the trace of a cached open of an unencrypted
// file on the default machine (ext4): RCU-walk all the way, the reference
// taken at complete_walk, and fscrypt_file_open's RCU fast path (seed 004
// v2), which ext4_file_open calls for every open; the descriptor is 3, a
// program's first after its standard streams.
func TestTraceOpenGolden(t *testing.T) {
	out, errs, rc := trace(t, "--times=false", "--patches", "fscrypt-file-open=v2", "open", "/tmp/hello")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	want := `# fs: ext4
# patches: fscrypt-file-open=v2
# variants: crypto-bio=workqueue,f2fs-lookup-prealloc=base,fscrypt-file-open=v2,fscrypt-fname-onstack=base,fscrypt-v1-kdf=base
# cold: false
# key: true
# clock: real
              |  do_sys_openat2() {
              |    path_openat() {
              |      lookup_fast() {
              |        /* dcache hit on "tmp" in RCU-walk (__d_lookup_rcu, no reference) */
              |      } /* lookup_fast */
              |      lookup_fast() {
              |        /* dcache hit on "hello" in RCU-walk (__d_lookup_rcu, no reference) */
              |      } /* lookup_fast */
              |      /* complete_walk: RCU-walk ends, reference taken on "hello" */
              |      vfs_open() {
              |        ext4_file_open() {
              |          fscrypt_file_open() {
              |            rcu_read_lock(); /* inline */
              |            /* RCU fast path: parent "tmp" not encrypted, no reference taken */
              |          } /* fscrypt_file_open = 0x0 */
              |        } /* ext4_file_open */
              |      } /* vfs_open */
              |    } /* path_openat */
              |  } /* do_sys_openat2 */
open("/tmp/hello", O_RDONLY) = 3
`
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestTraceScenarios(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--cold", "stat", "/tmp/link"}, []string{"lookup_fast() {\n              |      /* dcache miss on \"tmp\": RCU-walk -> ref-walk */", "dcache miss on \"link\" in ref-walk", "lookup_slow() {\n              |      d_alloc();\n              |      ext4_lookup() {\n              |        __ext4_find_entry();\n              |        d_splice_alias();", "= 0 (stat"}},
		{[]string{"stat", "/tmp/hello"}, []string{"dcache hit on \"tmp\" in RCU-walk", "dcache hit on \"hello\" in RCU-walk"}},
		{[]string{"read", "/secret/note", "100"}, []string{"ext4_file_read_iter", "\"top secret\\n\""}},
		{[]string{"--nokey", "getdents", "/secret"}, []string{"fscrypt_fname_disk_to_usr", "ext4_readdir"}},
		{[]string{"--nokey", "mkdir", "/secret/x"}, []string{"fscrypt_prepare_create", "= -1 ENOKEY"}},
		{[]string{"--patches", "fscrypt-file-open=base", "open", "/tmp/hello", "rdwr"}, []string{"fscrypt_file_open() {\n              |            dget_parent();\n              |            dput();", "O_RDWR) = 3"}},
		{[]string{"--cold", "open", "/secret/note"}, []string{"fscrypt_file_open() {\n              |            fscrypt_get_encryption_info() {", "crypto_alloc_skcipher", "xts(aes) -> "}},
		{[]string{"open", "/tmp/new", "creat"}, []string{"lookup_open() {\n              |        d_alloc();\n              |        ext4_lookup() {\n              |          __ext4_find_entry();\n              |          d_splice_alias();\n              |        } /* ext4_lookup */\n              |        ext4_create() {"}},
		{[]string{"unlink", "/tmp/hello"}, []string{"  } /* vfs_unlink */\n              |    evict();\n              |  } /* do_unlinkat */"}},
		{[]string{"symlink", "x", "/secret/l"}, []string{"fscrypt_encrypt_symlink() { /* inline */", "__fscrypt_encrypt_symlink() {"}},
		{[]string{"open", "/secret/note"}, []string{"fscrypt_file_open() {", "fscrypt_has_permitted_context"}},
		{[]string{"rename", "/tmp/hello", "/tmp/dir", "exchange"}, []string{"ext4_rename2", "RENAME_EXCHANGE) = 0"}},
		{[]string{"rename", "/tmp/hello", "/secret/hello"}, []string{"fscrypt_prepare_rename() {\n              |          fscrypt_has_permitted_context();\n              |          /* -EXDEV: !fscrypt_has_permitted_context(new_dir, d_inode(old_dentry)) */", "= -1 EXDEV"}},
		{[]string{"--events", "unlink", "/tmp/nope"}, []string{"= -1 ENOENT", "events: "}},
	} {
		out, errs, rc := trace(t, append([]string{"--times=false"}, c.args...)...)
		if rc != 0 {
			t.Errorf("%v: exit %d: %s", c.args, rc, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

func TestTraceUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"open"}, {"open", "/x", "sideways"}, {"--patches", "nope=1", "stat", "/"}} {
		if _, _, rc := trace(t, args...); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
	if out, errs, rc := trace(t, "--help"); rc != 0 || !strings.Contains(out, "Syscalls:") || errs != "" {
		t.Errorf("--help: exit %d, stdout %q, stderr %q", rc, out, errs)
	}
}

// TestTraceOnDiskFilesystems runs a cold lookup in the encrypted directory
// on ext4 and f2fs: the filesystem's ->lookup, the fscrypt hook that turns
// the name into its ciphertext, and the directory search.
func TestTraceOnDiskFilesystems(t *testing.T) {
	for fs, find := range map[string]string{"ext4": "__ext4_find_entry", "f2fs": "__f2fs_find_entry"} {
		out, errs, rc := trace(t, "--fs", fs, "--cold", "--times=false", "open", "/secret/note")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", fs, rc, errs)
		}
		for _, want := range []string{fs + "_lookup() {", "fscrypt_prepare_lookup() {", "fscrypt_fname_encrypt() {", "skcipher_request_alloc(); /* inline */", find + "();", fs + "_file_open() {", `open("/secret/note", O_RDONLY) = 3`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s trace lacks %q:\n%s", fs, want, out)
			}
		}
	}
	if _, errs, rc := trace(t, "--fs", "xfs", "stat", "/"); rc != 2 || !strings.Contains(errs, "want one of ext4, f2fs, memfs") {
		t.Fatalf("unknown fs: rc=%d %s", rc, errs)
	}
}

// TestTraceMemfsIsTmpfs: on --fs memfs (tmpfs) the open is
// generic_file_open, with no fscrypt_file_open, and the machine has no
// encrypted directory.
func TestTraceMemfsIsTmpfs(t *testing.T) {
	out, errs, rc := trace(t, "--fs", "memfs", "--times=false", "open", "/tmp/hello")
	if rc != 0 || !strings.Contains(out, "generic_file_open();") || strings.Contains(out, "fscrypt_") {
		t.Errorf("memfs open: rc %d %s\n%s", rc, errs, out)
	}
	if out, _, rc := trace(t, "--fs", "memfs", "--times=false", "stat", "/secret"); rc != 0 || !strings.Contains(out, "= -1 ENOENT") {
		t.Errorf("memfs stat /secret: rc %d\n%s", rc, out)
	}
}

// TestTraceFormats: --format perfetto writes a Trace Event document that
// passes the format's rules and names the syscall's functions; ftrace has
// function_graph's header and the machine in comments; the modelled clock
// gives the same bytes twice.
func TestTraceFormats(t *testing.T) {
	for _, fs := range []string{"ext4", "f2fs"} {
		out, errs, rc := trace(t, "--fs", fs, "--format", "perfetto", "--clock", "model", "open", "/secret/note")
		if rc != 0 {
			t.Fatalf("%s perfetto: rc %d: %s", fs, rc, errs)
		}
		if err := kernel.ValidatePerfetto([]byte(out)); err != nil {
			t.Errorf("%s perfetto: %v\n%s", fs, err, out)
		}
		if !strings.Contains(out, `"name":"fscrypt_file_open"`) {
			t.Errorf("%s perfetto lacks fscrypt_file_open:\n%s", fs, out)
		}
		again, _, _ := trace(t, "--fs", fs, "--format", "perfetto", "--clock", "model", "open", "/secret/note")
		if again != out {
			t.Errorf("%s: the modelled clock gave two different traces", fs)
		}
	}
	out, _, rc := trace(t, "--format", "ftrace", "--clock", "model", "stat", "/tmp/hello")
	if rc != 0 || !strings.Contains(out, "# tracer: function_graph") || !strings.Contains(out, "# fs: ext4") || !strings.Contains(out, "vfs_getattr();") {
		t.Errorf("ftrace: rc %d\n%s", rc, out)
	}
	if _, errs, rc := trace(t, "--format", "svg", "stat", "/"); rc != 2 || !strings.Contains(errs, "--format") {
		t.Errorf("bad format: rc %d %s", rc, errs)
	}
}

// TestTraceReadBio: readbio goes through the bio path, so seed 003's four
// crypto-bio variants give four different trees: the decrypt on the
// workqueue's kworker or inline in the device's completion, a request
// per data unit or chained or one for the whole bio; plain read says it
// takes the generic path; readbio refuses an unencrypted file.
func TestTraceReadBio(t *testing.T) {
	seen := map[string]string{}
	for v, want := range map[string][]string{
		"workqueue": {"kworker/u0:fscrypt_read_queue-", "fscrypt_decrypt_pagecache_blocks() {", "skcipher_request_alloc(); /* inline */"},
		"inline":    {"loop0/0-", "fscrypt_decrypt_pagecache_blocks() {"},
		"chain":     {"loop0/0-", "chained behind the first", "crypto_wait_req(); /* inline */"},
		"bio":       {"loop0/0-", "SKCIPHER_REQUEST_ON_STACK(); /* inline */", "CRYPTO_SKCIPHER_REQ_BIO"},
	} {
		out, errs, rc := trace(t, "--times=false", "--patches", "crypto-bio="+v, "readbio", "/secret/note")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", v, rc, errs)
		}
		want = append(want, "readbio: the bio path", "fscrypt_decrypt_bio() {", `crypto-bio=`+v+`) = 0 "top secret\n"`)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", v, w, out)
			}
		}
		for o, prev := range seen {
			if prev == out {
				t.Errorf("%s and %s give the same trace", v, o)
			}
		}
		seen[v] = out
	}
	if out, _, _ := trace(t, "--times=false", "--fs", "f2fs", "read", "/secret/note"); !strings.Contains(out, "read: the generic path") || strings.Contains(out, "fscrypt_decrypt_bio()") {
		t.Errorf("read:\n%s", out)
	}
	if _, errs, rc := trace(t, "readbio", "/tmp/hello"); rc != 2 || !strings.Contains(errs, "not an encrypted file") {
		t.Errorf("unencrypted: rc %d %s", rc, errs)
	}
	if _, _, rc := trace(t, "--no-key", "readbio", "/secret/note"); rc == 0 {
		t.Errorf("readbio without the key succeeded")
	}
	out, errs, rc := trace(t, "--format", "perfetto", "--clock", "model", "readbio", "/secret/note")
	if rc != 0 || kernel.ValidatePerfetto([]byte(out)) != nil || !strings.Contains(out, "fscrypt_read_queue") {
		t.Errorf("perfetto readbio: rc %d %s\n%s", rc, errs, out)
	}
}

// TestTraceV1KeyDerivation: /v1secret's key setup under --cold shows seed
// 002's three derivations: an ecb(aes) tfm with a kmalloc'd request, a
// sync tfm with an on-stack request, or the AES library with neither;
// --no-key removes the v1 key too (the name is then not found: ENOENT).
func TestTraceV1KeyDerivation(t *testing.T) {
	for v, want := range map[string][]string{
		"base":   {"crypto_alloc_skcipher() {\n              |                    /* ecb(aes) -> ", "skcipher_request_alloc(); /* inline */"},
		"sync":   {"crypto_alloc_sync_skcipher() {\n              |                    /* ecb(aes) -> ", "SYNC_SKCIPHER_REQUEST_ON_STACK(); /* inline */"},
		"aeslib": {"aes_prepareenckey();", "aes_encrypt() {"},
	} {
		out, errs, rc := trace(t, "--times=false", "--cold", "--patches", "fscrypt-v1-kdf="+v, "open", "/v1secret/note")
		if rc != 0 {
			t.Fatalf("%s: exit %d: %s", v, rc, errs)
		}
		want = append(want, "setup_v1_file_key_derived() {", "derive_key_aes() {", `open("/v1secret/note", O_RDONLY) = 3`)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: lacks %q:\n%s", v, w, out)
			}
		}
	}
	if out, _, _ := trace(t, "--times=false", "--cold", "--patches", "fscrypt-v1-kdf=aeslib", "open", "/v1secret/note"); strings.Contains(out, "ecb(aes)") {
		t.Errorf("aeslib allocates an ecb(aes) tfm:\n%s", out)
	}
	if out, _, _ := trace(t, "--times=false", "--no-key", "open", "/v1secret/note"); !strings.Contains(out, "= -1 ENOENT") {
		t.Errorf("--no-key v1:\n%s", out)
	}
}
