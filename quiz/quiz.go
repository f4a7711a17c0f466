// Package quiz is `vfslab quiz`: exercises in the manner of the OSTEP
// file-system simulators (vsfs.py, afs.py). For a seed it builds small
// machines and a sequence of operations and asks the student to predict
// what the simulated kernel does; -c prints the answers with the trace,
// the counters or the arithmetic that explains them; -r asks the reverse
// question (given the result, which operation, which variant, which
// name). Every answer is computed by running the simulator when the quiz
// is printed, never stored; the same seed prints the same quiz.
package quiz

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/vfslab/vfslab/kernel"
)

// Options selects a quiz.
type Options struct {
	// Seed draws the questions: the same seed prints the same quiz.
	Seed uint64
	// Topics are the topics' names (TopicNames), in the order asked;
	// none means every topic.
	Topics []string
	// N is the number of questions per topic, 1..MaxQuestions.
	N int
	// Solve prints the answers and what explains them.
	Solve bool
	// Reverse asks the reverse questions: given the result, which
	// operation, variant or name.
	Reverse bool
}

// MaxQuestions bounds Options.N.
const MaxQuestions = 20

// question is one exercise: what the student is asked, and the answer
// with its explanation, computed by running the simulator.
type question struct {
	setup   string // the machine, one or more lines
	ask     string
	answer  string
	explain string
}

// topicDef is one topic: gen makes question i of the quiz (forward or
// reverse) from the seed's generator.
type topicDef struct {
	name    string
	summary string
	gen     func(rng *rand.Rand, reverse bool) (*question, error)
}

var topics = []*topicDef{
	{"errno", "the errno a syscall returns (fscrypt's rules included: ENOKEY, EXDEV, ENOENT without the key; EPERM, EEXIST...)", genErrno},
	{"walk", "does a path walk stay in RCU-walk or drop to ref-walk, and why", genWalk},
	{"lockref", "atomic operations on the parent dentry's lockref during open(2) under each fscrypt-file-open variant (seed 004)", genLockref},
	{"hash", "where a name lands: the f2fs hash, level and bucket; the ext4 htree hash and leaf", genHash},
	{"nokey", "what getdents64 shows in an encrypted directory without its key (fscrypt's no-key names)", genNokey},
	{"kmalloc", "kmallocs of one lookup in a casefolded, encrypted f2fs directory under each f2fs-lookup-prealloc variant (seed 001)", genKmalloc},
}

// TopicSummary is one line saying what topic name asks ("" for an unknown
// topic).
func TopicSummary(name string) string {
	if t := findTopic(name); t != nil {
		return t.summary
	}
	return ""
}

func findTopic(name string) *topicDef {
	for _, t := range topics {
		if t.name == name {
			return t
		}
	}
	return nil
}

// TopicNames returns the topics' names in the order a quiz of every
// topic asks them.
func TopicNames() []string {
	var ns []string
	for _, t := range topics {
		ns = append(ns, t.name)
	}
	return ns
}

// newRand is the quiz's generator for seed and topic: PCG, so the same
// seed draws the same quiz with every Go release.
func newRand(seed uint64, topic string) *rand.Rand {
	var h uint64 = 14695981039346656037 // FNV-1a of the topic's name
	for i := 0; i < len(topic); i++ {
		h = (h ^ uint64(topic[i])) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

// Write prints the quiz o selects. Errors: an unknown topic or a count
// out of range (before anything is printed), the simulator's.
func Write(w io.Writer, o Options) error {
	ts := topics
	if len(o.Topics) > 0 {
		ts = nil
		for _, name := range o.Topics {
			t := findTopic(name)
			if t == nil {
				return fmt.Errorf("unknown topic %q; valid: %s", name, strings.Join(TopicNames(), ", "))
			}
			ts = append(ts, t)
		}
	}
	if o.N < 1 || o.N > MaxQuestions {
		return fmt.Errorf("%d questions per topic: want 1 to %d", o.N, MaxQuestions)
	}
	mode := "forward"
	if o.Reverse {
		mode = "reverse"
	}
	fmt.Fprintf(w, "vfslab quiz --seed %d (%s questions)\n", o.Seed, mode)
	qn := 0
	for _, t := range ts {
		rng := newRand(o.Seed, t.name)
		fmt.Fprintf(w, "\n== topic %s ==\n", t.name)
		for i := 0; i < o.N; i++ {
			q, err := t.gen(rng, o.Reverse)
			if err != nil {
				return fmt.Errorf("topic %s: %w", t.name, err)
			}
			qn++
			fmt.Fprintf(w, "\nQ%d. %s\n", qn, indent(q.setup, "    ", false))
			fmt.Fprintf(w, "    %s\n", indent(q.ask, "    ", false))
			if o.Solve {
				fmt.Fprintf(w, "  A%d. %s\n", qn, indent(q.answer, "      ", false))
				if q.explain != "" {
					fmt.Fprintf(w, "%s\n", indent(strings.TrimRight(q.explain, "\n"), "      | ", true))
				}
			}
		}
	}
	if !o.Solve {
		fmt.Fprintln(w, "\n(run again with -c to see the answers)")
	}
	return nil
}

// indent prefixes every line of s but the first (and the first too when
// first is set) with p.
func indent(s, p string, first bool) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i > 0 || first {
			lines[i] = p + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// pick returns one element of xs.
func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// letters labels choices.
const letters = "abcdefgh"

// choices formats a multiple-choice list.
func choices(opts []string) string {
	var b strings.Builder
	for i, o := range opts {
		fmt.Fprintf(&b, "\n  (%c) %s", letters[i], o)
	}
	return b.String()
}

// traceText renders a recorded trace without durations, for answers.
func traceText(x *kernel.TraceExport) string {
	x.Times = false
	x.Header = nil
	var b bytes.Buffer
	kernel.WriteTrace(&b, x, kernel.TraceText)
	return b.String()
}
