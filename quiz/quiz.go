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
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/vfslab/vfslab/kernel"
)

const usage = `Usage: vfslab quiz [--seed N] [--topic T] [-n Q] [-c] [-r]

Prints questions about what the simulated kernel does, in the manner of
the OSTEP file-system simulators. Each question runs on a fresh small
machine (the one vfslab trace uses: /tmp/hello, /tmp/dir/, /tmp/link ->
hello, the encrypted /secret/ with /secret/note), or on the machine the
topic describes. Work the answers out, then run the same command with -c.

Topics:
  errno     the errno a syscall returns (fscrypt's rules included:
            ENOKEY, EXDEV, ENOENT without the key; EPERM, EEXIST...)
  walk      does a path walk stay in RCU-walk or drop to ref-walk, and why
  lockref   atomic operations on the parent dentry's lockref during
            open(2) under each fscrypt-file-open variant (seed 004)
  hash      where a name lands: the f2fs hash, level and bucket; the ext4
            htree hash and leaf
  nokey     what getdents64 shows in an encrypted directory without its
            key (fscrypt's no-key names)
  kmalloc   kmallocs of one lookup in a casefolded, encrypted f2fs
            directory under each f2fs-lookup-prealloc variant (seed 001)
  all       one question of each topic (the default)

Flags:
`

// Main is `vfslab quiz`: it parses args, prints the quiz to stdout and
// returns the exit status (0, or 2 for bad usage with a one-line error
// on stderr, 1 when the simulator fails).
func Main(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quiz", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 0, "the random seed: the same seed prints the same quiz")
	topic := fs.String("topic", "all", "errno, walk, lockref, hash, nokey, kmalloc or all")
	n := fs.Int("n", 0, "questions per topic (default 3; 1 per topic with --topic all)")
	solve := fs.Bool("c", false, "print the answers and what explains them")
	reverse := fs.Bool("r", false, "ask the reverse question: given the result, which operation or variant")
	// Help goes to stdout when asked for; a bad flag is one line on
	// stderr (the CLI's convention).
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "vfslab quiz: %v; see vfslab quiz --help\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "vfslab quiz: unexpected argument %q; see vfslab quiz --help\n", fs.Arg(0))
		return 2
	}
	var ts []*topicDef
	if *topic == "all" {
		ts = topics
	} else if t := findTopic(*topic); t != nil {
		ts = []*topicDef{t}
	} else {
		fmt.Fprintf(stderr, "vfslab quiz: unknown topic %q; valid: %s, all; see vfslab quiz --help\n", *topic, strings.Join(topicNames(), ", "))
		return 2
	}
	count := *n
	if count == 0 {
		count = 3
		if *topic == "all" {
			count = 1
		}
	}
	if count < 0 || count > 20 {
		fmt.Fprintf(stderr, "vfslab quiz: -n %d: want 1 to 20\n", count)
		return 2
	}
	var b bytes.Buffer
	if err := Write(&b, Options{Seed: *seed, Topics: ts, N: count, Solve: *solve, Reverse: *reverse}); err != nil {
		stdout.Write(b.Bytes())
		fmt.Fprintln(stderr, "vfslab quiz:", err)
		return 1
	}
	stdout.Write(b.Bytes())
	return 0
}

// Options selects a quiz.
type Options struct {
	Seed    uint64
	Topics  []*topicDef
	N       int
	Solve   bool
	Reverse bool
}

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
	name string
	gen  func(rng *rand.Rand, reverse bool) (*question, error)
}

var topics = []*topicDef{
	{"errno", genErrno},
	{"walk", genWalk},
	{"lockref", genLockref},
	{"hash", genHash},
	{"nokey", genNokey},
	{"kmalloc", genKmalloc},
}

func findTopic(name string) *topicDef {
	for _, t := range topics {
		if t.name == name {
			return t
		}
	}
	return nil
}

func topicNames() []string {
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

// Write prints the quiz o selects.
func Write(w io.Writer, o Options) error {
	mode := "forward"
	if o.Reverse {
		mode = "reverse"
	}
	fmt.Fprintf(w, "vfslab quiz --seed %d (%s questions)\n", o.Seed, mode)
	qn := 0
	for _, t := range o.Topics {
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
