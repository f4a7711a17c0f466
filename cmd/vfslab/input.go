package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// parseHex decodes hex that may hold whitespace and newlines (the output
// of xxd -p, od, a pasted key); want >= 0 also checks the length. Errors
// are usage errors naming what.
func parseHex(what, s string, want int) ([]byte, error) {
	clean := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	b, err := hex.DecodeString(clean)
	if err != nil {
		return nil, usageError{fmt.Sprintf("%s: not hex: %v", what, err)}
	}
	if want >= 0 && len(b) != want {
		return nil, usageError{fmt.Sprintf("%s: %d bytes, want %d", what, len(b), want)}
	}
	return b, nil
}

// hexInput is one input of a command that takes ARG_HEX or "-": its bytes
// and the stdin line it came from (0: the argument).
type hexInput struct {
	data []byte
	line int
}

// wrap names the stdin line an error came from.
func (in hexInput) wrap(err error) error {
	if in.line == 0 || err == nil {
		return err
	}
	var ue usageError
	if errors.As(err, &ue) {
		return usagef("stdin line %d: %s", in.line, ue.msg)
	}
	var ke *kernelError
	if errors.As(err, &ke) {
		return &kernelError{fmt.Errorf("stdin line %d: %w", in.line, ke.err), ke.log}
	}
	return fmt.Errorf("stdin line %d: %w", in.line, err)
}

// maxStdinLine bounds one line of hex read from stdin (a name is at most
// 255 bytes, 510 hex digits; a line this long is not one).
const maxStdinLine = 1 << 16

// hexInputs returns the inputs arg stands for: its hex, or with "-" one
// hex input per non-empty line of stdin. Every line is decoded before any
// is used, so a bad line is refused before any output. allowEmpty
// accepts the empty argument "" (the empty name).
func hexInputs(what, arg string, stdin io.Reader, allowEmpty bool) ([]hexInput, error) {
	if arg != "-" {
		b, err := parseHex(what, arg, -1)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 && !allowEmpty {
			return nil, usagef("%s is empty: want at least one byte of hex", what)
		}
		return []hexInput{{data: b}}, nil
	}
	var out []hexInput
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 4096), maxStdinLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		b, err := parseHex(what, line, -1)
		if err != nil {
			return nil, hexInput{line: n}.wrap(err)
		}
		out = append(out, hexInput{data: b, line: n})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, usagef("stdin: a line longer than %d bytes", maxStdinLine)
		}
		return nil, fmt.Errorf("reading stdin: %w", err)
	}
	return out, nil
}

// guarded runs fn inside the simulator boundary: a kernel BUG or a Go
// panic in the simulated kernel becomes an error.
func guarded(t *kernel.Task, fn func() (string, error)) (out string, err error) {
	defer t.Recover(&err)
	return fn()
}

// describeErr renders an error with its errno's name when it has one.
func describeErr(err error) string {
	if e, ok := errno.Of(err); ok {
		return fmt.Sprintf("%s (%s)", err.Error(), errno.Name(e))
	}
	return err.Error()
}

// kernelLog returns the lines the simulated kernel logged that say why it
// refused: its pr_info chatter (which implementation a tfm uses) is left
// out.
func kernelLog(k *kernel.Kernel) []string {
	var out []string
	for _, l := range k.Log.Lines() {
		if strings.Contains(l, "using implementation") {
			continue
		}
		out = append(out, l)
	}
	return out
}
