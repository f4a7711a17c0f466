package quiz

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenRuns are the quizzes pinned in testdata: every topic forward and
// reverse, with and without the answers.
var goldenRuns = []struct {
	name string
	args []string
}{
	{"seed1-all-c", []string{"--seed", "1", "-c"}},
	{"seed2-all-r-c", []string{"--seed", "2", "-r", "-c"}},
	{"seed3-errno", []string{"--seed", "3", "--topic", "errno"}},
	{"seed4-errno-c", []string{"--seed", "4", "--topic", "errno", "-c"}},
	{"seed5-lockref-r-c", []string{"--seed", "5", "--topic", "lockref", "-n", "2", "-r", "-c"}},
	{"seed6-kmalloc-c", []string{"--seed", "6", "--topic", "kmalloc", "-n", "2", "-c"}},
}

func TestGolden(t *testing.T) {
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if rc := Main(g.args, &out, &errb); rc != 0 {
				t.Fatalf("rc %d: %s", rc, errb.String())
			}
			path := filepath.Join("testdata", g.name+".golden")
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(out.Bytes(), want) {
				t.Errorf("quiz %v differs from %s:\n%s", g.args, path, out.String())
			}
		})
	}
}

// TestQuestionsMatchAnswers checks that the questions printed without -c
// are the ones -c answers: the answers add lines and change none.
func TestQuestionsMatchAnswers(t *testing.T) {
	var q, a bytes.Buffer
	Main([]string{"--seed", "7", "--topic", "walk", "-n", "2"}, &q, &bytes.Buffer{})
	Main([]string{"--seed", "7", "--topic", "walk", "-n", "2", "-c"}, &a, &bytes.Buffer{})
	for _, line := range strings.Split(q.String(), "\n") {
		if strings.HasPrefix(line, "Q") && !strings.Contains(a.String(), line) {
			t.Errorf("question %q missing from the answered quiz", line)
		}
	}
	if !strings.Contains(a.String(), "A1.") || strings.Contains(q.String(), "A1.") {
		t.Error("answers shown or missing")
	}
}

func TestUsage(t *testing.T) {
	cases := []struct {
		args []string
		rc   int
		msg  string
	}{
		{[]string{"--topic", "btrfs"}, 2, "unknown topic"},
		{[]string{"extra"}, 2, "unexpected argument"},
		{[]string{"-n", "99"}, 2, "want 1 to 20"},
		{[]string{"--seed", "x"}, 2, "invalid value"},
		{[]string{"--help"}, 0, "Topics:"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		rc := Main(c.args, &out, &errb)
		// Help on stdout with status 0; an error is one line on stderr.
		got := errb.String()
		if rc == 0 {
			got = out.String()
		} else if strings.Count(got, "\n") != 1 {
			t.Errorf("%v: stderr is not one line: %q", c.args, got)
		}
		if rc != c.rc || !strings.Contains(got, c.msg) {
			t.Errorf("%v: rc %d, output %q", c.args, rc, got)
		}
	}
}

// TestPlaceF2fs checks the bucket arithmetic against the kernel's
// definition: dir_buckets(level, 0) = 1 << level, two blocks per bucket
// below level 31, levels laid out one after another.
func TestPlaceF2fs(t *testing.T) {
	p := PlaceF2fs("hello", 2, 0)
	if p.Buckets != 4 || p.Bucket != uint64(p.Hash)%4 || p.NrBlocks != 2 || p.Block != 2+4+2*p.Bucket {
		t.Errorf("PlaceF2fs(hello, 2) = %+v", p)
	}
}

// TestLabAnswerKey checks that docs/lab.md's answer key is what the quiz
// prints today, so the lab cannot drift from the simulator; -update
// rewrites the key's code blocks (the first ``` block after each command
// line).
func TestLabAnswerKey(t *testing.T) {
	path := filepath.Join("..", "docs", "lab.md")
	lab, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the lab page: %v", err)
	}
	keys := []struct {
		marker string
		args   []string
	}{
		{"`vfslab quiz --seed 42 -c` (one question", []string{"--seed", "42", "-c"}},
		{"`vfslab quiz --seed 42 -r -c`:", []string{"--seed", "42", "-r", "-c"}},
	}
	doc := string(lab)
	for _, k := range keys {
		var out bytes.Buffer
		if rc := Main(k.args, &out, &bytes.Buffer{}); rc != 0 {
			t.Fatalf("%v: rc %d", k.args, rc)
		}
		if *update {
			at := strings.Index(doc, k.marker)
			if at < 0 {
				t.Fatalf("no %q in the lab page", k.marker)
			}
			open := at + strings.Index(doc[at:], "```\n") + 4
			end := open + strings.Index(doc[open:], "```\n")
			doc = doc[:open] + out.String() + doc[end:]
			continue
		}
		if !strings.Contains(doc, out.String()) {
			t.Errorf("docs/lab.md lacks the output of quiz %v; go test -update rewrites its answer key", k.args)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
