package shell

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/vfs"
)

// GNU diff: normal and unified output, recursive directory comparison.

// --- diff ---

func cmdDiff(c *cmd) int {
	opts, args, ok := c.flags("uqabBwNr", "U", "[OPTION]... FILES")
	if !ok {
		return 2
	}
	if len(args) != 2 {
		if len(args) < 2 {
			c.errf("missing operand after '%s'", strings.Join(args, " "))
		} else {
			c.errf("extra operand '%s'", args[2])
		}
		fmt.Fprintf(c.errw, "diff: Try 'diff --help' for more information.\n")
		return 2
	}
	if opts['r'] != "" {
		return c.diffTree(args[0], args[1], opts, "diff -r")
	}
	return c.diffFiles(args[0], args[1], opts, "")
}

// diffTree is diff -r: two directories compared name by name (symlinks
// followed, as diff does by default), "Only in DIR: NAME" for a name on
// one side, the files' diffs each under a "diff -r A B" line. The status
// is the worst of the comparisons: 0 same, 1 different, 2 trouble.
func (c *cmd) diffTree(a, b string, opts map[byte]string, header string) int {
	sa, err := c.stat(a, true)
	if err != nil {
		c.errf("%s: %s", a, strerror(err))
		return 2
	}
	sb, err := c.stat(b, true)
	if err != nil {
		c.errf("%s: %s", b, strerror(err))
		return 2
	}
	aDir, bDir := sa.Mode&vfs.S_IFMT == vfs.S_IFDIR, sb.Mode&vfs.S_IFMT == vfs.S_IFDIR
	switch {
	case aDir && bDir:
	case aDir || bDir:
		kind := func(dir bool) string {
			if dir {
				return "a directory"
			}
			return "a regular file"
		}
		fmt.Fprintf(c.out, "File %s is %s while file %s is %s\n", a, kind(aDir), b, kind(bDir))
		return 1
	default:
		return c.diffFiles(a, b, opts, header+" "+a+" "+b)
	}
	names := func(dir string) (map[string]bool, bool) {
		ents, err := c.m.readDir(c.errw, c.id, c.name, c.abs(dir))
		if err != nil {
			c.errf("%s: %s", dir, strerror(err))
			return nil, false
		}
		out := map[string]bool{}
		for _, e := range ents {
			if e.Name != "." && e.Name != ".." {
				out[e.Name] = true
			}
		}
		return out, true
	}
	na, okA := names(a)
	nb, okB := names(b)
	if !okA || !okB {
		return 2
	}
	var all []string
	for n := range na {
		all = append(all, n)
	}
	for n := range nb {
		if !na[n] {
			all = append(all, n)
		}
	}
	sort.Strings(all)
	st := 0
	for _, n := range all {
		r := 0
		switch {
		case !nb[n]:
			fmt.Fprintf(c.out, "Only in %s: %s\n", a, n)
			r = 1
		case !na[n]:
			fmt.Fprintf(c.out, "Only in %s: %s\n", b, n)
			r = 1
		default:
			r = c.diffTree(path.Join(a, n), path.Join(b, n), opts, header)
		}
		st = max(st, r)
	}
	return st
}

// diffFiles compares two files (header, when not empty, is printed
// before a difference, as diff -r names each pair).
func (c *cmd) diffFiles(an, bn string, opts map[byte]string, header string) int {
	a, err := c.readAll(an)
	if err != nil {
		c.errf("%s: %s", an, strerror(err))
		return 2
	}
	b, err := c.readAll(bn)
	if err != nil {
		c.errf("%s: %s", bn, strerror(err))
		return 2
	}
	if bytes.Equal(a, b) {
		return 0
	}
	if opts['q'] != "" {
		fmt.Fprintf(c.out, "Files %s and %s differ\n", an, bn)
		return 1
	}
	if header != "" {
		fmt.Fprintln(c.out, header)
	}
	x, y := splitLines(a), splitLines(b)
	if opts['u'] != "" || opts['U'] != "" {
		fmt.Fprintf(c.out, "--- %s\n+++ %s\n", an, bn)
		unifiedDiff(c.out, x, y)
		return 1
	}
	normalDiff(c.out, x, y)
	return 1
}

// lcsEdits returns the edit script between x and y: for each line, ' ',
// '-' or '+'.
type edit struct {
	op   byte
	text string
	i, j int // 1-based line numbers in x and y after the edit
}

func lcsEdits(x, y []string) []edit {
	n, m := len(x), len(y)
	dp := make([][]int, n+1)
	for i := range dp {
		dp[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	var out []edit
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			i, j = i+1, j+1
			out = append(out, edit{' ', x[i-1], i, j})
		case j < m && (i == n || dp[i][j+1] >= dp[i+1][j]):
			j++
			out = append(out, edit{'+', y[j-1], i, j})
		default:
			i++
			out = append(out, edit{'-', x[i-1], i, j})
		}
	}
	return out
}

func rangeStr(a, b int) string {
	if a == b {
		return strconv.Itoa(a)
	}
	return fmt.Sprintf("%d,%d", a, b)
}

func normalDiff(w io.Writer, x, y []string) {
	es := lcsEdits(x, y)
	for k := 0; k < len(es); {
		if es[k].op == ' ' {
			k++
			continue
		}
		start := k
		for k < len(es) && es[k].op != ' ' {
			k++
		}
		var del, add []edit
		for _, e := range es[start:k] {
			if e.op == '-' {
				del = append(del, e)
			} else {
				add = append(add, e)
			}
		}
		prevI, prevJ := 0, 0
		if start > 0 {
			prevI, prevJ = es[start-1].i, es[start-1].j
		}
		switch {
		case len(add) == 0:
			fmt.Fprintf(w, "%sd%d\n", rangeStr(del[0].i, del[len(del)-1].i), prevJ)
		case len(del) == 0:
			fmt.Fprintf(w, "%da%s\n", prevI, rangeStr(add[0].j, add[len(add)-1].j))
		default:
			fmt.Fprintf(w, "%sc%s\n", rangeStr(del[0].i, del[len(del)-1].i), rangeStr(add[0].j, add[len(add)-1].j))
		}
		for _, e := range del {
			fmt.Fprintf(w, "< %s\n", e.text)
		}
		if len(del) > 0 && len(add) > 0 {
			fmt.Fprintln(w, "---")
		}
		for _, e := range add {
			fmt.Fprintf(w, "> %s\n", e.text)
		}
	}
}

func unifiedDiff(w io.Writer, x, y []string) {
	es := lcsEdits(x, y)
	const ctx = 3
	for k := 0; k < len(es); {
		if es[k].op == ' ' {
			k++
			continue
		}
		start := max(0, k-ctx)
		end := k
		for end < len(es) {
			if es[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(es) && es[run].op == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(es) {
				end = min(end+ctx, len(es))
				break
			}
			end = run
		}
		ai, bj := 1, 1
		if start > 0 {
			ai, bj = es[start-1].i+1, es[start-1].j+1
		}
		na, nb := 0, 0
		for _, e := range es[start:end] {
			if e.op != '+' {
				na++
			}
			if e.op != '-' {
				nb++
			}
		}
		if na == 0 {
			ai--
		}
		if nb == 0 {
			bj--
		}
		fmt.Fprintf(w, "@@ -%d,%d +%d,%d @@\n", ai, na, bj, nb)
		for _, e := range es[start:end] {
			fmt.Fprintf(w, "%c%s\n", e.op, e.text)
		}
		k = end
	}
}
