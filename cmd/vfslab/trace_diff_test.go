package main

import (
	"strings"
	"testing"
)

// TestWriteUnifiedDiff pins the hunks GNU diff -u writes for the same
// inputs: two hunks when the changes are far apart, a hunk that grows
// at the end, and an empty side as -0,0.
func TestWriteUnifiedDiff(t *testing.T) {
	a := strings.Split("a b c d e f g h i j k", " ")
	b := strings.Split("a B c d e f g h i j k l", " ")
	var w strings.Builder
	if !writeUnifiedDiff(&w, "A", "B", a, b, 3) {
		t.Fatal("no difference reported")
	}
	want := `--- A
+++ B
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -9,3 +9,4 @@
 i
 j
 k
+l
`
	if w.String() != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", w.String(), want)
	}
	w.Reset()
	writeUnifiedDiff(&w, "A", "B", nil, []string{"x", "y"}, 3)
	if want := "--- A\n+++ B\n@@ -0,0 +1,2 @@\n+x\n+y\n"; w.String() != want {
		t.Fatalf("diff from empty:\n%q\nwant %q", w.String(), want)
	}
	w.Reset()
	// Changes closer than twice the context share one hunk.
	c := strings.Split("a b c d e f g h", " ")
	d := strings.Split("a X c d e f Y h", " ")
	writeUnifiedDiff(&w, "A", "B", c, d, 3)
	if strings.Count(w.String(), "@@ -") != 1 || !strings.Contains(w.String(), "@@ -1,8 +1,8 @@") {
		t.Fatalf("one hunk wanted:\n%s", w.String())
	}
	w.Reset()
	if writeUnifiedDiff(&w, "A", "B", a, a, 3) || w.Len() != 0 {
		t.Fatalf("identical inputs: %q", w.String())
	}
}

// TestTraceDiff: seed 004's two trees differ where the kernel's do
// (dget_parent and dput against the RCU section), the output is the
// same on every run, identical sets say so, and bad sets are usage errors.
func TestTraceDiff(t *testing.T) {
	out, errs, rc := trace(t, "--diff", "fscrypt-file-open=base", "fscrypt-file-open=v2", "open", "/tmp/hello")
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errs)
	}
	for _, w := range []string{"--- patches: base\n+++ patches: fscrypt-file-open=v2\n@@ ",
		"\n-              |            dget_parent();\n-              |            dput();\n+              |            rcu_read_lock(); /* inline */\n",
		"RCU fast path"} {
		if !strings.Contains(out, w) {
			t.Errorf("diff lacks %q:\n%s", w, out)
		}
	}
	again, _, _ := trace(t, "--diff", "fscrypt-file-open=base", "fscrypt-file-open=v2", "open", "/tmp/hello")
	if again != out {
		t.Errorf("two runs differ:\n%s\n%s", out, again)
	}
	// Seed 000 as posted: the encryption declares the on-stack request,
	// keeps the allocation and loses the free.
	out, _, rc = trace(t, "--cold", "--diff", "base", "fscrypt-fname-onstack=v2", "stat", "/secret/note")
	if rc != 0 || !strings.Contains(out, "-              |              skcipher_request_free(); /* inline */") ||
		!strings.Contains(out, "+              |              SKCIPHER_REQUEST_ON_STACK(); /* inline */") ||
		strings.Contains(out, "-              |              skcipher_request_alloc(); /* inline */") {
		t.Errorf("seed 000 diff: rc %d\n%s", rc, out)
	}
	out, _, rc = trace(t, "--diff", "base", "base", "stat", "/tmp")
	if rc != 0 || !strings.Contains(out, "give the same trace") {
		t.Errorf("same sets: rc %d\n%s", rc, out)
	}
	for _, args := range [][]string{
		{"--diff", "base", "stat"},
		{"--diff", "nope=1", "base", "stat", "/"},
		{"--diff", "base", "fscrypt-file-open=v9", "stat", "/"},
		{"--diff", "base", "base", "frob", "/"},
		{"--format", "perfetto", "--diff", "base", "base", "stat", "/"},
	} {
		if _, _, rc := trace(t, args...); rc != 2 {
			t.Errorf("%v: exit %d, want 2", args, rc)
		}
	}
}

// TestWriteSideBySide pins the columns of GNU diff -y -t -W 30 on the
// same inputs (checked against diffutils 3.8).
func TestWriteSideBySide(t *testing.T) {
	var w strings.Builder
	writeSideBySide(&w, []string{"a", "b", "same", "xx"}, []string{"a", "c", "same", "new", "yy"}, 30)
	want := "a                a\n" +
		"b             |  c\n" +
		"same             same\n" +
		"xx            |  new\n" +
		"              >  yy\n"
	if w.String() != want {
		t.Fatalf("side by side:\n%q\nwant\n%q", w.String(), want)
	}
	w.Reset()
	writeSideBySide(&w, []string{"only-left", "common"}, []string{"common"}, 31)
	if want := "only-left      <\ncommon           common\n"; w.String() != want {
		t.Fatalf("side by side:\n%q\nwant\n%q", w.String(), want)
	}
}
