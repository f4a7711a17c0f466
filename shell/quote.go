package shell

import (
	"strings"
)

// GNU coreutils name files in their messages through gnulib's quotearg:
// quoteaf (shell_escape_always_quoting_style: "cannot stat 'x'") and
// quotef (shell_escape_quoting_style: "md5sum: x: No such file"). The
// machine runs in the C locale (no LANG), where every byte outside
// printable ASCII is escaped: a UTF-8 name such as "mañana" is
// 'ma'$'\303\261''ana', as Debian's coreutils 9.1 print it in the guest
// of vfslab linux diff. The rules are gnulib's quotearg_buffer_restyled
// for these two styles, written out here because no Go library
// reproduces them byte for byte.

// quoteaf is coreutils' quoteaf: s always quoted for the shell.
func quoteaf(s string) string { return shellEscapeQuote(s, true) }

// quotef is coreutils' quotef: s as it is when the shell would read it
// back unchanged, else quoted as quoteaf quotes it.
func quotef(s string) string { return shellEscapeQuote(s, false) }

// shellSpecial are the printable characters that make quotearg quote a
// name for the shell wherever they appear.
const shellSpecial = " !\"$&'()*;<=>?[\\^`|"

// needsShellQuote reports whether quotearg's shell_escape style quotes s:
// an empty name, a shell special character, '#' or '~' first, a name
// that is just "{" or "}", or a byte that is not printable ASCII.
func needsShellQuote(s string) bool {
	if s == "" || s == "{" || s == "}" {
		return true
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unprintable(c) || strings.IndexByte(shellSpecial, c) >= 0 {
			return true
		}
		if i == 0 && (c == '#' || c == '~') {
			return true
		}
	}
	return false
}

// quoteCompatible reports whether s reads the same inside double quotes
// in C and in the shell, so that quotearg prefers "it's" to 'it'\”s'
// for a name with a single quote: printable ASCII with none of the
// special characters but the space and the quote, and '#', '~', '{' or
// '}' only where they are not special ('#' and '~' first).
func quoteCompatible(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case unprintable(c):
			return false
		case c == ' ' || c == '\'':
		case strings.IndexByte(shellSpecial, c) >= 0:
			return false
		case c == '#' || c == '~':
			if i != 0 {
				return false
			}
		case c == '{' || c == '}':
			return false
		}
	}
	return true
}

// cEscapes are the control characters quotearg writes as C escapes
// inside $'...'; every other unprintable byte is three octal digits.
var cEscapes = map[byte]byte{'\a': 'a', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v'}

// shellEscapeQuote quotes s as quotearg's shell_escape_always style
// (always) or shell_escape style: single quotes, ' as '\”, and runs of
// unprintable bytes as $'\ooo' between the quoted parts; "..." for a
// name whose only special character is a single quote.
func shellEscapeQuote(s string, always bool) string {
	if !always && !needsShellQuote(s) {
		return s
	}
	if strings.IndexByte(s, '\'') >= 0 && quoteCompatible(s) {
		return `"` + s + `"`
	}
	var b strings.Builder
	b.WriteByte('\'')
	// pending is quotearg's pending_shell_escape_end: a $'...' is open
	// and must be closed ('') before a plain character. A name with a
	// single quote is scanned once before it is written (to see whether
	// "..." would do), and gnulib does not reset the flag between the two
	// passes: when the scan ended inside $'...' (the name's last byte is
	// unprintable), the written name starts as if one were open. Debian's
	// coreutils 9.1 print "a'b\303" as '''a'\''b'$'\303', and the model
	// does the same.
	pending := strings.IndexByte(s, '\'') >= 0 && unprintable(s[len(s)-1])
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case unprintable(c):
			if !pending {
				b.WriteString(`'$'`)
				pending = true
			}
			b.WriteByte('\\')
			if e, ok := cEscapes[c]; ok {
				b.WriteByte(e)
			} else {
				b.WriteByte('0' + c>>6)
				b.WriteByte('0' + c>>3&7)
				b.WriteByte('0' + c&7)
			}
		case c == '\'':
			// '\'' ends the quoted part (and any $'...'), an
			// escaped quote, and a new quoted part.
			b.WriteString(`'\''`)
			pending = false
		default:
			if pending {
				b.WriteString(`''`)
				pending = false
			}
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// unprintable reports whether quotearg escapes byte c in the C locale.
func unprintable(c byte) bool { return c < 0x20 || c >= 0x7f }

// gnuQuoting are the machine's commands that imitate GNU coreutils,
// whose messages name files through quoteaf and quotef.
var gnuQuoting = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`ls cat mkdir rmdir rm mv ln touch stat readlink truncate head tail
		cp dd md5sum sha1sum sha256sum sha512sum wc sort uniq tr cut tee od chmod chown chgrp
		basename dirname mknod mkfifo realpath du df fallocate sync`) {
		gnuQuoting[n] = true
	}
}

// gnuQuoteArgs rewrites a coreutils message's format and arguments as
// the command's error(3) calls name files: each '%s' (a quoteaf in the
// program) takes the argument quoted by quoteaf, and a leading "%s: "
// (error (0, errno, "%s", quotef (file))) takes it through quotef. Other
// verbs and arguments are left alone.
func gnuQuoteArgs(format string, args []any) (string, []any) {
	out := make([]byte, 0, len(format))
	args = append([]any(nil), args...)
	ai := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out = append(out, c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '%' {
			out = append(out, "%%"...)
			i++
			continue
		}
		j := i + 1
		for j < len(format) && !isVerb(format[j]) {
			j++
		}
		if j >= len(format) {
			out = append(out, format[i:]...)
			break
		}
		verb := format[i : j+1]
		if s, ok := argString(args, ai); ok && verb == "%s" {
			switch {
			case i > 0 && j+1 < len(format) && format[i-1] == '\'' && format[j+1] == '\'':
				// '%s': the quotes around it are quoteaf's.
				out = append(out[:len(out)-1], "%s"...)
				args[ai] = quoteaf(s)
				ai++
				i = j + 1 // past the closing quote
				continue
			case i == 0 && strings.HasPrefix(format[j+1:], ": "):
				args[ai] = quotef(s)
			}
		}
		out = append(out, verb...)
		ai++
		i = j
	}
	return string(out), args
}

// argString is args[i] when it is a string.
func argString(args []any, i int) (string, bool) {
	if i >= len(args) {
		return "", false
	}
	s, ok := args[i].(string)
	return s, ok
}

// isVerb reports whether c ends a fmt verb.
func isVerb(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
