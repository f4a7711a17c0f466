package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// FuzzInputParsing feeds arbitrary text to the command line's number and
// hex parsers (parseHex, hexInputs on an argument and on stdin, the range
// checking int, uint64, duration and threads flag values, paramValue): each
// returns a value or an error, never panics, and a value it accepts is
// within the flag's range and round-trips (hex decodes to the bytes
// encoding/hex gives for the text without its white space).
func FuzzInputParsing(f *testing.F) {
	for _, s := range []string{"", "00", "de ad\nbe ef", "0x10", "-1", "99999999999999999999", "1,2,4", "2,2", "200ms", "a=b", "=", "\t", "zz", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := parseHex("ARG", s, -1)
		if err == nil {
			clean := strings.Map(func(r rune) rune {
				if unicode.IsSpace(r) {
					return -1
				}
				return r
			}, s)
			want, _ := hex.DecodeString(clean)
			if !bytes.Equal(b, want) {
				t.Fatalf("parseHex(%q) = %x, want %x", s, b, want)
			}
		} else if !errors.As(err, new(usageError)) {
			t.Fatalf("parseHex(%q): %T %v, want a usage error", s, err, err)
		}
		if _, err := parseHex("ARG", s, 4); err == nil && len(b) != 4 {
			t.Fatalf("parseHex(%q, 4) accepted %d bytes", s, len(b))
		}
		if ins, err := hexInputs("ARG", s, strings.NewReader(""), false); s != "-" && err == nil && (len(ins) != 1 || len(ins[0].data) == 0) {
			t.Fatalf("hexInputs(%q) = %v", s, ins)
		}
		if ins, err := hexInputs("ARG", "-", strings.NewReader(s), true); err == nil {
			for _, in := range ins {
				if in.line < 1 {
					t.Fatalf("hexInputs(stdin %q): line %d", s, in.line)
				}
			}
		}

		var n int
		iv := &intValue{p: &n, min: -5, max: 1000}
		if iv.Set(s) == nil && (n < -5 || n > 1000) {
			t.Fatalf("int flag took %q as %d", s, n)
		}
		var u uint64
		uv := &uint64Value{p: &u, min: 1, max: 1 << 40}
		if uv.Set(s) == nil && (u < 1 || u > 1<<40) {
			t.Fatalf("uint flag took %q as %d", s, u)
		}
		if uv.Set(s) == nil {
			if back, err := strconv.ParseUint(uv.String(), 10, 64); err != nil || back != u {
				t.Fatalf("uint flag %q: String %q", s, uv.String())
			}
		}
		var d time.Duration
		dv := &durationValue{p: &d, min: time.Millisecond, max: time.Minute}
		if dv.Set(s) == nil && (d < time.Millisecond || d > time.Minute) {
			t.Fatalf("duration flag took %q as %v", s, d)
		}
		var th []int
		tv := &threadsValue{p: &th, max: 64}
		if tv.Set(s) == nil {
			seen := map[int]bool{}
			for _, x := range th {
				if x < 1 || x > 64 || seen[x] {
					t.Fatalf("threads flag took %q as %v", s, th)
				}
				seen[x] = true
			}
		}
		_ = paramValue{}.Set(s)
	})
}
