package main

import (
	"strings"
	"testing"
)

// TestTraceReadPath: a read(2) on ext4 shows Linux's buffered read path:
// filemap_read, readahead, ext4's bio and its completion, and the
// decryption where the crypto-bio variant runs it. With --loop the bio
// goes to the loop device's worker, whose tree is printed with the
// decrypt kworker's (workqueue) or with the decryption in it (bio).
func TestTraceReadPath(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--fs", "ext4", "--cold", "--no-times", "read", "/secret/note"},
			[]string{"filemap_read() {", "page_cache_sync_ra() {", "page_cache_ra_unbounded() {", "read_pages() {", "ext4_mpage_readpages() {",
				"submit_bio() {", "mpage_end_io() {", "fscrypt_enqueue_decrypt_work();", "kworker/u0:fscrypt_read_queue", "decrypt_work() {",
				"fscrypt_decrypt_bio() {", "__read_end_io();", "copy_page_to_iter();", `= 11 "top secret\n"`}},
		{[]string{"--fs", "ext4", "--loop", "--cold", "--no-times", "read", "/secret/note"},
			[]string{"loop_queue_rq();", "kworker/u0:loop0", "loop_process_work() {", "lo_read_simple();", "blk_mq_end_request() {",
				"bio_endio() {", "kworker/u0:fscrypt_read_queue", "folio_wait_locked();"}},
		{[]string{"--fs", "ext4", "--loop", "--cold", "--no-times", "--patches", "crypto-bio=bio", "read", "/secret/note"},
			[]string{"kworker/u0:loop0", "crypto-bio=bio: no decrypt workqueue", "one request for the whole bio"}},
	} {
		out, errOut, code := trace(t, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: the trace lacks %q:\n%s", c.args, w, out)
			}
		}
		if strings.Contains(strings.Join(c.args, " "), "crypto-bio=bio") && strings.Contains(out, "fscrypt_read_queue") {
			t.Errorf("%v: a decrypt kworker ran in the bio variant", c.args)
		}
	}
	if _, errOut, code := trace(t, "--fs", "memfs", "--loop", "read", "/tmp/hello"); code != 2 || !strings.Contains(errOut, "--loop") {
		t.Errorf("--loop on memfs: exit %d: %s", code, errOut)
	}
}
