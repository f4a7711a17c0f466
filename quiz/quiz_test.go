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
	o    Options
}{
	{"seed1-all-c", Options{Seed: 1, N: 1, Solve: true}},
	{"seed2-all-r-c", Options{Seed: 2, N: 1, Reverse: true, Solve: true}},
	{"seed3-errno", Options{Seed: 3, Topics: []string{"errno"}, N: 3}},
	{"seed4-errno-c", Options{Seed: 4, Topics: []string{"errno"}, N: 3, Solve: true}},
	{"seed5-lockref-r-c", Options{Seed: 5, Topics: []string{"lockref"}, N: 2, Reverse: true, Solve: true}},
	{"seed6-kmalloc-c", Options{Seed: 6, Topics: []string{"kmalloc"}, N: 2, Solve: true}},
}

// write is Write into a string, failing the test on an error.
func write(t *testing.T, o Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, o); err != nil {
		t.Fatalf("%+v: %v", o, err)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, g := range goldenRuns {
		t.Run(g.name, func(t *testing.T) {
			out := bytes.NewBufferString(write(t, g.o))
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
				t.Errorf("quiz %+v differs from %s:\n%s", g.o, path, out.String())
			}
		})
	}
}

// TestQuestionsMatchAnswers checks that the questions printed without -c
// are the ones -c answers: the answers add lines and change none.
func TestQuestionsMatchAnswers(t *testing.T) {
	q := write(t, Options{Seed: 7, Topics: []string{"walk"}, N: 2})
	a := write(t, Options{Seed: 7, Topics: []string{"walk"}, N: 2, Solve: true})
	for _, line := range strings.Split(q, "\n") {
		if strings.HasPrefix(line, "Q") && !strings.Contains(a, line) {
			t.Errorf("question %q missing from the answered quiz", line)
		}
	}
	if !strings.Contains(a, "A1.") || strings.Contains(q, "A1.") {
		t.Error("answers shown or missing")
	}
}

// TestBadOptions: an unknown topic or a count out of range is an error
// before anything is printed.
func TestBadOptions(t *testing.T) {
	for _, o := range []Options{{Topics: []string{"btrfs"}, N: 1}, {N: 0}, {N: MaxQuestions + 1}} {
		var b bytes.Buffer
		if err := Write(&b, o); err == nil || b.Len() != 0 {
			t.Errorf("%+v: err %v, printed %q", o, err, b.String())
		}
	}
	for _, name := range TopicNames() {
		if TopicSummary(name) == "" {
			t.Errorf("topic %s has no summary", name)
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
		o      Options
	}{
		{"`vfslab quiz --seed 42 -c` (one question", Options{Seed: 42, N: 1, Solve: true}},
		{"`vfslab quiz --seed 42 -r -c`:", Options{Seed: 42, N: 1, Reverse: true, Solve: true}},
	}
	doc := string(lab)
	for _, k := range keys {
		out := bytes.NewBufferString(write(t, k.o))
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
			t.Errorf("docs/lab.md lacks the output of %s; go test -update rewrites its answer key", k.marker)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
