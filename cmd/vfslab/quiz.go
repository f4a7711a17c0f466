package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vfslab/vfslab/quiz"
)

func init() {
	extraCommands = append(extraCommands, newQuizCmd)
}

// newQuizCmd is `vfslab quiz`: the questions of package quiz for a seed.
func newQuizCmd() *cobra.Command {
	var o quiz.Options
	var topic string
	var b strings.Builder
	for _, name := range quiz.TopicNames() {
		fmt.Fprintf(&b, "  %-9s %s\n", name, quiz.TopicSummary(name))
	}
	topicChoices := append(quiz.TopicNames(), "all")
	cmd := &cobra.Command{
		Use:   "quiz [flags]",
		Short: "OSTEP-style exercises: predict a syscall's result, the walk, the atomics, where a name lands",
		Long: `Prints questions about what the simulated kernel does, in the manner of
the OSTEP file-system simulators. Each question runs on a fresh small
machine (the one vfslab trace uses: /tmp/hello, /tmp/dir/, /tmp/link ->
hello, the encrypted /secret/ with /secret/note), or on the machine the
topic describes. Work the answers out, then run the same command with -c.
Every answer is computed by running the simulator; the same seed prints
the same quiz.

Topics:
` + b.String() + `  all       one question of each topic (the default)`,
		Example: `  vfslab quiz --seed 42 --topic walk -n 3
  vfslab quiz --seed 42 --topic walk -n 3 -c
  vfslab quiz --seed 42 -r -c`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if topic != "all" {
				o.Topics = []string{topic}
			}
			if !cmd.Flags().Changed("questions") {
				o.N = 3
				if topic == "all" {
					o.N = 1
				}
			}
			// The quiz is printed whole or, when the simulator fails,
			// up to the question that failed.
			var out bytes.Buffer
			err := quiz.Write(&out, o)
			cmd.OutOrStdout().Write(out.Bytes())
			return err
		},
	}
	fs := cmd.Flags()
	fs.Uint64Var(&o.Seed, "seed", 0, "the random seed: the same seed prints the same quiz")
	choiceFlag(fs, &topic, "topic", "all", topicChoices, "the topic")
	fs.VarP(&intValue{p: &o.N, min: 1, max: quiz.MaxQuestions}, "questions", "n",
		fmt.Sprintf("questions per topic: default 3, or 1 per topic with --topic all (1..%d)", quiz.MaxQuestions))
	fs.BoolVarP(&o.Solve, "answers", "c", false, "print the answers and what explains them")
	fs.BoolVarP(&o.Reverse, "reverse", "r", false, "ask the reverse question: given the result, which operation, variant or name")
	return cmd
}
