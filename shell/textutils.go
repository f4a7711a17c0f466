package shell

import (
	"bufio"
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/vfs"
)

// The text and stream commands of GNU coreutils (cat, head, tail, tee, wc,
// sort, uniq, tr, cut, seq, cmp, echo, the checksums).

// --- cat, head, tail, tee ---

func cmdCat(c *cmd) int {
	_, args, ok := c.flags("uv", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		if err := c.copyOut(a); err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
		}
	}
	return st
}

// copyOut streams a file to standard output.
func (c *cmd) copyOut(a string) error {
	if a == "-" {
		_, err := io.Copy(c.out, c.in)
		return err
	}
	r, err := c.openReader(a)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.CopyBuffer(onlyWriter{c.out}, onlyReader{r}, make([]byte, streamChunk))
	return err
}

// streamChunk is the size of the reads and writes of a streaming command
// (coreutils' IO_BUFSIZE, 128 KiB): what it holds at once, whatever the
// size of its input.
const streamChunk = 128 << 10

// onlyReader and onlyWriter hide ReadFrom and WriteTo, so that io.Copy
// moves streamChunk bytes at a time through the given buffer.
type onlyReader struct{ r io.Reader }

func (r onlyReader) Read(b []byte) (int, error) { return r.r.Read(b) }

type onlyWriter struct{ w io.Writer }

func (w onlyWriter) Write(b []byte) (int, error) { return w.w.Write(b) }

// eachChunk reads input a (a file or "-") in pieces of size bytes, calling
// fn with each.
func (c *cmd) eachChunk(a string, size int, fn func([]byte)) error {
	r, err := c.openReader(a)
	if err != nil {
		return err
	}
	defer r.Close()
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			fn(buf[:n])
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (c *cmd) inputs(args []string) ([][]byte, []string, int) {
	if len(args) == 0 {
		args = []string{"-"}
	}
	var out [][]byte
	var names []string
	st := 0
	for _, a := range args {
		data, err := c.readAll(a)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 2
			continue
		}
		out = append(out, data)
		names = append(names, a)
	}
	return out, names, st
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// headTailCount is head's and tail's count: -c's (bytesMode), else -n's,
// else 10 lines.
func headTailCount(opts map[byte]string) (v string, bytesMode bool) {
	if v, ok := opts['c']; ok {
		return v, true
	}
	if v, ok := opts['n']; ok {
		return v, false
	}
	return "10", false
}

func cmdHead(c *cmd) int {
	c.args = obsoleteCount(c.args)
	opts, args, ok := c.flags("qv", "nc", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	v, bytesMode := headTailCount(opts)
	allBut := strings.HasPrefix(v, "-")
	n, err := strconv.ParseInt(strings.TrimPrefix(v, "-"), 10, 64)
	if err != nil || n < 0 {
		what := "lines"
		if bytesMode {
			what = "bytes"
		}
		c.errf("invalid number of %s: '%s'", what, v)
		return 1
	}
	headers := (len(args) > 1 && opts['q'] == "") || opts['v'] != ""
	st := 0
	for i, a := range args {
		if headers {
			if i > 0 {
				io.WriteString(c.out, "\n")
			}
			name := a
			if a == "-" {
				name = "standard input"
			}
			fmt.Fprintf(c.out, "==> %s <==\n", name)
		}
		if c.headOne(a, n, bytesMode, allBut) != 0 {
			st = 1
		}
	}
	return st
}

// headOne is head of one input, read as it goes: the first n lines or
// bytes, or with allBut all but the last n (a queue of n lines or bytes
// held back), so that an endless input ends once head has its part.
func (c *cmd) headOne(a string, n int64, bytesMode, allBut bool) int {
	r, err := c.openReader(a)
	if err != nil {
		c.errf("cannot open '%s' for reading: %s", a, strerror(err))
		return 1
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, streamChunk)
	switch {
	case bytesMode && !allBut:
		if _, err := io.CopyN(c.out, br, n); err != nil && err != io.EOF {
			c.errf("error reading '%s': %s", a, strerror(err))
			return 1
		}
	case bytesMode:
		held := make([]byte, 0, n)
		buf := make([]byte, streamChunk)
		for {
			k, err := br.Read(buf)
			held = append(held, buf[:k]...)
			if int64(len(held)) > n {
				out := int64(len(held)) - n
				c.out.Write(held[:out])
				held = append(held[:0], held[out:]...)
			}
			if err != nil {
				break
			}
		}
	case !allBut:
		for i := int64(0); i < n; i++ {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				c.out.Write(line)
			}
			if err != nil {
				break
			}
		}
	default:
		var held [][]byte
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				held = append(held, line)
				if int64(len(held)) > n {
					c.out.Write(held[0])
					held = held[1:]
				}
			}
			if err != nil {
				break
			}
		}
	}
	return 0
}

func cmdTail(c *cmd) int {
	c.args = obsoleteCount(c.args)
	opts, args, ok := c.flags("qvf", "nc", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if st, ok := c.tailStream(args, opts); ok {
		return st
	}
	datas, _, st := c.inputs(args)
	for _, d := range datas {
		if v, ok := opts['c']; ok {
			if strings.HasPrefix(v, "+") {
				n, _ := strconv.Atoi(v[1:])
				c.out.Write(d[min(max(n-1, 0), len(d)):])
				continue
			}
			n, _ := strconv.Atoi(v)
			c.out.Write(d[max(0, len(d)-n):])
			continue
		}
		lines := strings.SplitAfter(string(d), "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		v := opts['n']
		if v == "" {
			v = "10"
		}
		if strings.HasPrefix(v, "+") {
			n, _ := strconv.Atoi(v[1:])
			for i := max(n-1, 0); i < len(lines); i++ {
				io.WriteString(c.out, lines[i])
			}
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(v, "-"))
		for i := max(0, len(lines)-n); i < len(lines); i++ {
			io.WriteString(c.out, lines[i])
		}
	}
	return min(st, 1)
}

// tailStream is tail of one input in bounded memory: -c N keeps the last
// N bytes read, -n N the last N lines, +N skips and copies the rest. An
// N past streamChunk*64 bytes or lines, or several inputs, leave it to
// cmdTail. false: not handled.
func (c *cmd) tailStream(args []string, opts map[byte]string) (int, bool) {
	if len(args) > 1 || opts['f'] != "" {
		return 0, false
	}
	in := "-"
	if len(args) == 1 {
		in = args[0]
	}
	v, bytesMode := headTailCount(opts)
	from := strings.HasPrefix(v, "+")
	n, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(v, "+"), "-"), 10, 64)
	if err != nil || n < 0 || n > 64*streamChunk {
		return 0, false
	}
	r, err := c.openReader(in)
	if err != nil {
		c.errf("cannot open '%s' for reading: %s", in, strerror(err))
		return 1, true
	}
	defer r.Close()
	br := bufio.NewReaderSize(r, streamChunk)
	switch {
	case from && bytesMode:
		if _, err := io.CopyN(io.Discard, br, max(n-1, 0)); err != nil {
			return 0, true
		}
		io.CopyBuffer(onlyWriter{c.out}, onlyReader{br}, make([]byte, streamChunk))
	case from:
		for i := int64(1); i < n; i++ {
			if _, err := br.ReadSlice('\n'); err == io.EOF {
				return 0, true
			} else if err != nil && err != bufio.ErrBufferFull {
				return 0, true
			} else if err == bufio.ErrBufferFull {
				i--
			}
		}
		io.CopyBuffer(onlyWriter{c.out}, onlyReader{br}, make([]byte, streamChunk))
	case bytesMode:
		// A ring of the last n bytes.
		ring := make([]byte, 0, n)
		buf := make([]byte, streamChunk)
		for {
			k, err := br.Read(buf)
			ring = append(ring, buf[:k]...)
			if int64(len(ring)) > n {
				ring = append(ring[:0], ring[int64(len(ring))-n:]...)
			}
			if err != nil {
				break
			}
		}
		c.out.Write(ring)
	default:
		var lines [][]byte
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				lines = append(lines, line)
				if int64(len(lines)) > n {
					lines = lines[1:]
				}
			}
			if err != nil {
				break
			}
		}
		for _, l := range lines {
			c.out.Write(l)
		}
	}
	return 0, true
}

func cmdTee(c *cmd) int {
	opts, args, ok := c.flags("ai", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	st := 0
	flags := vfs.O_WRONLY | vfs.O_CREAT | vfs.O_TRUNC
	if opts['a'] != "" {
		flags = vfs.O_WRONLY | vfs.O_CREAT | vfs.O_APPEND
	}
	// Each file is opened first, then standard input copied to all of
	// them a chunk at a time, as tee does.
	outs := make([]io.WriteCloser, len(args))
	for i, a := range args {
		w, err := c.openWriter(a, flags)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
			continue
		}
		outs[i] = w
	}
	buf := make([]byte, streamChunk)
	for {
		n, rerr := c.in.Read(buf)
		if n > 0 {
			c.out.Write(buf[:n])
			for i, w := range outs {
				if w == nil {
					continue
				}
				if _, err := w.Write(buf[:n]); err != nil {
					c.errf("%s: %s", args[i], strerror(err))
					w.Close()
					outs[i] = nil
					st = 1
				}
			}
		}
		if rerr != nil {
			break
		}
	}
	for i, w := range outs {
		if w == nil {
			continue
		}
		if err := w.Close(); err != nil {
			c.errf("%s: %s", args[i], strerror(err))
			st = 1
		}
	}
	return st
}

// openWriter opens p for a streaming writer (tee): the machine's file, or
// for the special files writeFile knows (/dev/null, /proc's and /sys's
// knobs, /dev/kmsg) what is written, handed to writeFile at Close, as the
// knob takes one write.
func (c *cmd) openWriter(p string, flags int) (io.WriteCloser, error) {
	ap := c.abs(p)
	if ap == "/dev/null" {
		return nullFile{}, nil
	}
	if _, ok := c.m.procFileFor(ap, c.id); ok || ap == dropCachesPath || ap == kmsgPath {
		return &knobWriter{c: c, p: p, flags: flags}, nil
	}
	return c.open(p, flags, 0o644)
}

// knobWriter collects a write to a special file for writeFile.
type knobWriter struct {
	c     *cmd
	p     string
	flags int
	buf   []byte
}

func (k *knobWriter) Write(b []byte) (int, error) {
	if len(k.buf)+len(b) > streamChunk {
		return 0, errno.EINVAL
	}
	k.buf = append(k.buf, b...)
	return len(b), nil
}

func (k *knobWriter) Close() error { return k.c.writeFile(k.p, k.buf, k.flags) }

// --- checksums, wc ---

// sumBlock is the read size of the checksum tools (md5_stream's and
// sha256_stream's BLOCKSIZE, 32 KiB).
const sumBlock = 32 << 10

// sums prints each input's digest, read in sumBlock pieces.
func (c *cmd) sums(newHash func() hash.Hash) int {
	args := c.args
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		h := newHash()
		if err := c.eachChunk(a, sumBlock, func(b []byte) { h.Write(b) }); err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
			continue
		}
		fmt.Fprintf(c.out, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), a)
	}
	return st
}

func cmdMd5sum(c *cmd) int { return c.sums(md5.New) }

func cmdSha256sum(c *cmd) int { return c.sums(sha256.New) }

func cmdWc(c *cmd) int {
	opts, args, ok := c.flags("lwcm", "", "[OPTION]... [FILE]...")
	if !ok {
		return 1
	}
	if opts['l'] == "" && opts['w'] == "" && opts['c'] == "" && opts['m'] == "" {
		opts['l'], opts['w'], opts['c'] = "1", "1", "1"
	}
	names := args
	if len(names) == 0 {
		names = []string{"-"}
	}
	st := 0
	// A row is one input's counts, or its error, printed in the inputs'
	// order as wc prints them.
	type row struct {
		v    []int
		name string
		err  string
	}
	var rows []row
	counted := 0
	tot := make([]int, 3)
	for i := range names {
		// Lines, words (runs of non-space, across chunks) and bytes.
		l, w, size, inWord := 0, 0, 0, false
		err := c.eachChunk(names[i], streamChunk, func(b []byte) {
			size += len(b)
			l += bytes.Count(b, []byte{'\n'})
			for _, ch := range b {
				sp := ch == ' ' || (ch >= '\t' && ch <= '\r')
				if !sp && !inWord {
					w++
				}
				inWord = !sp
			}
		})
		if err != nil {
			rows = append(rows, row{err: names[i] + ": " + strerror(err)})
			st = 1
			continue
		}
		counted++
		var v []int
		for j, on := range []bool{opts['l'] != "", opts['w'] != "", opts['c'] != "" || opts['m'] != ""} {
			x := []int{l, w, size}[j]
			tot[j] += x
			if on {
				v = append(v, x)
			}
		}
		name := names[i]
		if name == "-" && len(args) == 0 {
			name = ""
		}
		rows = append(rows, row{v: v, name: name})
	}
	if len(names) > 1 {
		var v []int
		for j, on := range []bool{opts['l'] != "", opts['w'] != "", opts['c'] != "" || opts['m'] != ""} {
			if on {
				v = append(v, tot[j])
			}
		}
		rows = append(rows, row{v: v, name: "total"})
		counted++
	}
	width := 1
	for _, r := range rows {
		for _, x := range r.v {
			width = max(width, len(strconv.Itoa(x)))
		}
	}
	if len(rows) > 0 && len(rows[0].v) > 1 && len(args) == 0 {
		width = max(width, 7)
	}
	for _, r := range rows {
		if r.err != "" {
			c.errf("%s", r.err)
			continue
		}
		var parts []string
		for _, x := range r.v {
			if len(r.v) == 1 && counted == 1 {
				parts = append(parts, strconv.Itoa(x))
			} else {
				parts = append(parts, fmt.Sprintf("%*d", width, x))
			}
		}
		line := strings.Join(parts, " ")
		if r.name != "" {
			line += " " + r.name
		}
		fmt.Fprintln(c.out, line)
	}
	return min(st, 1)
}

// --- sort, uniq, tr, cut, seq ---

func cmdSort(c *cmd) int {
	opts, args, ok := c.flags("nrufb", "kt", "[OPTION]... [FILE]...")
	if !ok {
		return 2
	}
	datas, _, st := c.inputs(args)
	var lines []string
	for _, d := range datas {
		lines = append(lines, splitLines(d)...)
	}
	key := func(s string) string {
		k, ok := opts['k']
		if !ok {
			return s
		}
		f, _ := strconv.Atoi(strings.Split(k, ",")[0])
		var fields []string
		if sep, ok := opts['t']; ok {
			fields = strings.Split(s, sep)
		} else {
			fields = strings.Fields(s)
		}
		if f >= 1 && f <= len(fields) {
			return strings.Join(fields[f-1:], " ")
		}
		return ""
	}
	less := func(a, b string) bool {
		ka, kb := key(a), key(b)
		if opts['n'] != "" {
			na, _ := strconv.ParseFloat(strings.Fields(ka + " 0")[0], 64)
			nb, _ := strconv.ParseFloat(strings.Fields(kb + " 0")[0], 64)
			if na != nb {
				return na < nb
			}
			return a < b
		}
		if opts['f'] != "" {
			ka, kb = strings.ToUpper(ka), strings.ToUpper(kb)
		}
		if ka != kb {
			return ka < kb
		}
		return a < b
	}
	sort.SliceStable(lines, func(i, j int) bool {
		if opts['r'] != "" {
			return less(lines[j], lines[i])
		}
		return less(lines[i], lines[j])
	})
	prev := ""
	for i, l := range lines {
		if opts['u'] != "" && i > 0 && key(l) == key(prev) {
			continue
		}
		fmt.Fprintln(c.out, l)
		prev = l
	}
	return st
}

func cmdUniq(c *cmd) int {
	opts, args, ok := c.flags("cdu", "", "[OPTION]... [INPUT [OUTPUT]]")
	if !ok {
		return 1
	}
	in := "-"
	if len(args) > 0 {
		in = args[0]
	}
	r, err := c.openReader(in)
	if err != nil {
		c.errf("%s: %s", in, strerror(err))
		return 1
	}
	defer r.Close()
	// One line and its count are held: uniq reads as it goes.
	br := bufio.NewReaderSize(r, streamChunk)
	emit := func(line string, n int) {
		if (opts['d'] == "" || n > 1) && (opts['u'] == "" || n == 1) {
			if opts['c'] != "" {
				fmt.Fprintf(c.out, "%7d %s\n", n, line)
			} else {
				fmt.Fprintln(c.out, line)
			}
		}
	}
	cur, n := "", 0
	for {
		l, err := br.ReadString('\n')
		if l == "" && err != nil {
			break
		}
		l = strings.TrimSuffix(l, "\n")
		if n > 0 && l == cur {
			n++
		} else {
			if n > 0 {
				emit(cur, n)
			}
			cur, n = l, 1
		}
		if err != nil {
			break
		}
	}
	if n > 0 {
		emit(cur, n)
	}
	return 0
}

// trSet expands a tr set: ranges, escapes and [:class:].
func trSet(s string) []byte {
	var out []byte
	classes := map[string]string{
		"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
		"[:digit:]": "0123456789", "[:space:]": " \t\n\r\v\f", "[:blank:]": " \t",
		"[:alpha:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
		"[:alnum:]": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	}
	var raw []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '[' {
			if j := strings.Index(s[i:], ":]"); j > 0 {
				if cl, ok := classes[s[i:i+j+2]]; ok {
					raw = append(raw, cl...)
					i += j + 1
					continue
				}
			}
		}
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				raw = append(raw, '\n')
			case 't':
				raw = append(raw, '\t')
			case 'r':
				raw = append(raw, '\r')
			case '0', '1', '2', '3':
				v := 0
				k := i
				for ; k < len(s) && k < i+3 && s[k] >= '0' && s[k] <= '7'; k++ {
					v = v*8 + int(s[k]-'0')
				}
				raw = append(raw, byte(v))
				i = k - 1
			default:
				raw = append(raw, s[i])
			}
			continue
		}
		raw = append(raw, s[i])
	}
	for i := 0; i < len(raw); i++ {
		if i+2 < len(raw) && raw[i+1] == '-' && raw[i+2] >= raw[i] {
			for ch := int(raw[i]); ch <= int(raw[i+2]); ch++ {
				out = append(out, byte(ch))
			}
			i += 2
			continue
		}
		out = append(out, raw[i])
	}
	return out
}

// cmdTr is tr(1): translate SET1 to SET2, -d delete, -s squeeze, -c
// and -C complement SET1 (the same in the C locale). It streams:
// standard input is read and written in chunks, so `tr -dC a-z <
// /dev/urandom | head -c 16` ends when head has its bytes (the write
// fails once the pipe's reader is gone).
func cmdTr(c *cmd) int {
	opts, args, ok := c.flags("dscC", "", "[OPTION]... SET1 [SET2]")
	if !ok {
		return 1
	}
	if len(args) == 0 || (opts['d'] == "" && opts['s'] == "" && len(args) < 2) {
		if len(args) == 0 {
			c.errf("missing operand")
		} else {
			c.errf("missing operand after '%s'", args[0])
		}
		fmt.Fprintf(c.errw, "Try 'tr --help' for more information.\n")
		return 1
	}
	s1 := trSet(args[0])
	var in1 [256]bool
	for _, b := range s1 {
		in1[b] = true
	}
	if opts['c'] != "" || opts['C'] != "" {
		for i := range in1 {
			in1[i] = !in1[i]
		}
	}
	var m [256]byte
	translate := opts['d'] == "" && !(opts['s'] != "" && len(args) == 1)
	if translate {
		s2 := trSet(args[1])
		for i := range m {
			m[i] = byte(i)
		}
		for i, b := range s1 {
			if len(s2) == 0 {
				break
			}
			m[b] = s2[min(i, len(s2)-1)]
		}
	}
	buf := make([]byte, 32<<10)
	out := make([]byte, 0, len(buf))
	last, have := byte(0), false
	for {
		n, err := c.in.Read(buf)
		out = out[:0]
		for _, b := range buf[:n] {
			switch {
			case opts['d'] != "":
				if !in1[b] {
					out = append(out, b)
				}
			case !translate:
				if have && in1[b] && last == b {
					continue
				}
				out = append(out, b)
			default:
				out = append(out, m[b])
			}
			last, have = b, true
		}
		if len(out) > 0 {
			if _, werr := c.out.Write(out); werr != nil {
				return 1
			}
		}
		if err != nil {
			return 0
		}
	}
}

func cmdCut(c *cmd) int {
	opts, args, ok := c.flags("s", "dfcb", "OPTION... [FILE]...")
	if !ok {
		return 1
	}
	list, isField := opts['f']
	if !isField {
		if list, ok = opts['c']; !ok {
			if list, ok = opts['b']; !ok {
				c.errf("you must specify a list of bytes, characters, or fields")
				fmt.Fprintf(c.errw, "Try 'cut --help' for more information.\n")
				return 1
			}
		}
	}
	sel := func(n int) bool {
		for _, part := range strings.Split(list, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, _ := strconv.Atoi(lo)
			if !isRange {
				if a == n {
					return true
				}
				continue
			}
			if lo == "" {
				a = 1
			}
			b := 1 << 30
			if hi != "" {
				b, _ = strconv.Atoi(hi)
			}
			if n >= a && n <= b {
				return true
			}
		}
		return false
	}
	delim := "\t"
	if d, ok := opts['d']; ok {
		delim = d
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	st := 0
	for _, a := range args {
		r, err := c.openReader(a)
		if err != nil {
			c.errf("%s: %s", a, strerror(err))
			st = 1
			continue
		}
		// A line at a time.
		br := bufio.NewReaderSize(r, streamChunk)
		for {
			l, rerr := br.ReadString('\n')
			if l == "" && rerr != nil {
				break
			}
			l = strings.TrimSuffix(l, "\n")
			if !isField {
				var b []byte
				for i := 0; i < len(l); i++ {
					if sel(i + 1) {
						b = append(b, l[i])
					}
				}
				fmt.Fprintln(c.out, string(b))
				continue
			}
			if !strings.Contains(l, delim) {
				if opts['s'] == "" {
					fmt.Fprintln(c.out, l)
				}
				continue
			}
			var out []string
			for i, f := range strings.Split(l, delim) {
				if sel(i + 1) {
					out = append(out, f)
				}
			}
			fmt.Fprintln(c.out, strings.Join(out, delim))
		}
		r.Close()
	}
	return st
}

// seqFormatError checks seq -f's FORMAT as seq does: exactly one
// floating-point directive (%f, %e or %g, with flags, width and
// precision), "%%" aside. It returns the complaint, or "".
func seqFormatError(format string) string {
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			i++
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0'123456789.", format[j]) >= 0 {
			j++
		}
		if j == len(format) || strings.IndexByte("feEgGaA", format[j]) < 0 {
			return "has unknown %" + format[i+1:min(j+1, len(format))] + " directive"
		}
		n++
		i = j
	}
	switch {
	case n == 0:
		return "has no % directive"
	case n > 1:
		return "has too many % directives"
	}
	return ""
}

func cmdSeq(c *cmd) int {
	opts, args, ok := c.flags("w", "sf", "[OPTION]... LAST")
	if !ok {
		return 1
	}
	var nums []int64
	for _, a := range args {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			c.errf("invalid floating point argument: '%s'", a)
			fmt.Fprintf(c.errw, "Try 'seq --help' for more information.\n")
			return 1
		}
		nums = append(nums, n)
	}
	first, inc, last := int64(1), int64(1), int64(0)
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, inc, last = nums[0], nums[1], nums[2]
	default:
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'seq --help' for more information.\n")
		return 1
	}
	if inc == 0 {
		c.errf("invalid Zero increment value: '0'")
		return 1
	}
	sep := "\n"
	if s, ok := opts['s']; ok {
		sep = s
	}
	w := 0
	if opts['w'] != "" {
		w = max(len(strconv.FormatInt(first, 10)), len(strconv.FormatInt(last, 10)))
	}
	format, hasFormat := opts['f']
	if hasFormat {
		if msg := seqFormatError(format); msg != "" {
			c.errf("format '%s' %s", format, msg)
			return 1
		}
	}
	var b strings.Builder
	n := 0
	for i := first; (inc > 0 && i <= last) || (inc < 0 && i >= last); i += inc {
		if n > 0 {
			b.WriteString(sep)
		}
		if hasFormat {
			fmt.Fprintf(&b, format, float64(i))
		} else {
			fmt.Fprintf(&b, "%0*d", w, i)
		}
		n++
		if b.Len() > 1<<16 {
			io.WriteString(c.out, b.String())
			b.Reset()
		}
	}
	if n > 0 {
		b.WriteString("\n")
	}
	io.WriteString(c.out, b.String())
	return 0
}

func cmdCmp(c *cmd) int {
	opts, args, ok := c.flags("sl", "", "[OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]")
	if !ok {
		return 2
	}
	if len(args) == 1 {
		args = append(args, "-")
	}
	if len(args) < 2 {
		c.errf("missing operand after '%s'", strings.Join(args, " "))
		return 2
	}
	ra, err := c.openReader(args[0])
	if err != nil {
		c.errf("%s: %s", args[0], strerror(err))
		return 2
	}
	defer ra.Close()
	rb, err := c.openReader(args[1])
	if err != nil {
		c.errf("%s: %s", args[1], strerror(err))
		return 2
	}
	defer rb.Close()
	// Both inputs are compared a chunk at a time.
	a, b := bufio.NewReaderSize(ra, streamChunk), bufio.NewReaderSize(rb, streamChunk)
	line, off := 1, 0
	for {
		x, errA := a.ReadByte()
		y, errB := b.ReadByte()
		if errA != nil || errB != nil {
			if errA != nil && errB != nil {
				return 0
			}
			if opts['s'] == "" {
				short := args[0]
				if errB != nil {
					short = args[1]
				}
				fmt.Fprintf(c.errw, "cmp: EOF on %s after byte %d\n", short, off)
			}
			return 1
		}
		off++
		if x != y {
			if opts['s'] == "" {
				fmt.Fprintf(c.out, "%s %s differ: byte %d, line %d\n", args[0], args[1], off, line)
			}
			return 1
		}
		if x == '\n' {
			line++
		}
	}
}

// cmdYes is yes(1): its arguments (default "y") on a line, for ever, until
// the write fails (SIGPIPE once the pipe's reader has gone).
func cmdYes(c *cmd) int {
	line := "y"
	if len(c.args) > 0 {
		line = strings.Join(c.args, " ")
	}
	line += "\n"
	// yes fills a buffer with whole lines and writes it again and again.
	buf := []byte(strings.Repeat(line, max(1, 8192/len(line))))
	for {
		if _, err := c.out.Write(buf); err != nil {
			c.errf("standard output: %s", strerror(err))
			return 1
		}
	}
}

// obsoleteCount turns head's and tail's obsolete -N (and +N for tail)
// into -n N.
func obsoleteCount(args []string) []string {
	var out []string
	for i, a := range args {
		// Only the first argument is the obsolete count (head -5 FILE),
		// as in coreutils: `head -n -2` keeps its -2.
		if i == 0 && len(a) > 1 && (a[0] == '-' || a[0] == '+') && strings.Trim(a[1:], "0123456789") == "" {
			n := a[1:]
			if a[0] == '+' {
				n = a
			}
			out = append(out, "-n", n)
			continue
		}
		out = append(out, a)
	}
	return out
}

// cmdEcho is /bin/echo, for the programs that run commands themselves
// (xargs); a script's echo is the shell's builtin.
func cmdEcho(c *cmd) int {
	args := splitEchoFlags(append([]string{"echo"}, c.args...))[1:]
	newline, esc := true, false
	for len(args) > 0 && (args[0] == "-n" || args[0] == "-e" || args[0] == "-E") {
		switch args[0] {
		case "-n":
			newline = false
		case "-e":
			esc = true
		case "-E":
			esc = false
		}
		args = args[1:]
	}
	out := strings.Join(args, " ")
	if esc {
		out = string(trSet(out))
	}
	if newline {
		out += "\n"
	}
	io.WriteString(c.out, out)
	return 0
}
