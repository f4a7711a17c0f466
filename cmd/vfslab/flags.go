package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flag values that check their range as they are parsed, so that a bad
// value is a usage error naming the flag and the range before any work
// starts. pflag reports a Set error as
// `invalid argument "X" for "--flag" flag: want ...`.

// intValue is an int flag accepting min..max.
type intValue struct {
	p        *int
	min, max int
	extra    string // accepted besides the range, e.g. "0 (calibrate)"
}

func (v *intValue) String() string { return strconv.Itoa(*v.p) }
func (v *intValue) Type() string   { return "int" }
func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < v.min || n > v.max {
		return fmt.Errorf("want %s", v.want())
	}
	*v.p = n
	return nil
}
func (v *intValue) want() string {
	if v.extra != "" {
		return fmt.Sprintf("%s or an integer in %d..%d", v.extra, v.min+1, v.max)
	}
	return fmt.Sprintf("an integer in %d..%d", v.min, v.max)
}

// intFlag defines --name accepting min..max; the usage says so.
func intFlag(fs *pflag.FlagSet, p *int, name string, def, min, max int, usage string) {
	*p = def
	fs.Var(&intValue{p: p, min: min, max: max}, name, fmt.Sprintf("%s (%d..%d)", usage, min, max))
}

// uint64Value is a uint64 flag accepting min..max, in decimal or 0x hex.
type uint64Value struct {
	p        *uint64
	min, max uint64
}

func (v *uint64Value) String() string { return strconv.FormatUint(*v.p, 10) }
func (v *uint64Value) Type() string   { return "uint" }
func (v *uint64Value) Set(s string) error {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64)
	if err != nil || n < v.min || n > v.max {
		return fmt.Errorf("want an integer in %d..%d", v.min, v.max)
	}
	*v.p = n
	return nil
}

func uint64Flag(fs *pflag.FlagSet, p *uint64, name string, def, min, max uint64, usage string) {
	*p = def
	fs.Var(&uint64Value{p: p, min: min, max: max}, name, fmt.Sprintf("%s (%d..%d)", usage, min, max))
}

// durationValue is a duration flag accepting min..max.
type durationValue struct {
	p        *time.Duration
	min, max time.Duration
}

func (v *durationValue) String() string { return v.p.String() }
func (v *durationValue) Type() string   { return "duration" }
func (v *durationValue) Set(s string) error {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < v.min || d > v.max {
		return fmt.Errorf("want a duration in %v..%v (e.g. 200ms, 2s)", v.min, v.max)
	}
	*v.p = d
	return nil
}

func durationFlag(fs *pflag.FlagSet, p *time.Duration, name string, def, min, max time.Duration, usage string) {
	*p = def
	fs.Var(&durationValue{p: p, min: min, max: max}, name, fmt.Sprintf("%s (%v..%v)", usage, min, max))
}

// choiceValue is a string flag accepting one of a list of words.
type choiceValue struct {
	p       *string
	choices []string
}

func (v *choiceValue) String() string { return *v.p }
func (v *choiceValue) Type() string   { return "string" }
func (v *choiceValue) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("want one of %s", strings.Join(v.choices, ", "))
	}
	*v.p = s
	return nil
}

func choiceFlag(fs *pflag.FlagSet, p *string, name, def string, choices []string, usage string) {
	*p = def
	fs.Var(&choiceValue{p: p, choices: choices}, name, fmt.Sprintf("%s (%s)", usage, strings.Join(choices, "|")))
}

// threadsValue is a comma-separated list of distinct worker counts, each in
// 1..max.
type threadsValue struct {
	p   *[]int
	max int
}

func (v *threadsValue) String() string {
	var s []string
	for _, n := range *v.p {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}
func (v *threadsValue) Type() string { return "list" }
func (v *threadsValue) Set(s string) error {
	want := fmt.Sprintf("want a comma-separated list of distinct worker counts, each in 1..%d (e.g. 1,2,4)", v.max)
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > v.max {
			return fmt.Errorf("%s", want)
		}
		if slices.Contains(out, n) {
			return fmt.Errorf("%d given twice; %s", n, want)
		}
		out = append(out, n)
	}
	*v.p = out
	return nil
}

// paramValue collects repeated --param name=value flags.
type paramValue map[string]string

func (p paramValue) String() string { return "" }
func (p paramValue) Type() string   { return "name=value" }
func (p paramValue) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value (see vfslab ab --list)")
	}
	if _, dup := p[k]; dup {
		return fmt.Errorf("parameter %s given twice", k)
	}
	p[k] = v
	return nil
}

// boolFlagNo defines --name and its negation --no-name (the form that
// turns a true-by-default flag off); the last one given wins.
func boolFlagNo(fs *pflag.FlagSet, p *bool, name string, def bool, usage string) {
	*p = def
	fs.BoolVar(p, name, def, usage)
	fs.Var(negBool{p}, "no-"+name, "turn --"+name+" off")
	fs.Lookup("no-" + name).NoOptDefVal = "true"
}

// negBool is the --no-X side of boolFlagNo.
type negBool struct{ p *bool }

func (n negBool) String() string { return strconv.FormatBool(!*n.p) }
func (n negBool) Type() string   { return "bool" }
func (n negBool) IsBoolFlag() bool {
	return true
}
func (n negBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*n.p = !b
	return nil
}

// formats are the output formats of ab and report.
var formats = []string{"text", "json", "csv", "benchstat"}

// formatFlags defines --format and its shorthand --json.
type formatFlags struct {
	format string
	json   bool
}

func (f *formatFlags) define(fs *pflag.FlagSet) {
	choiceFlag(fs, &f.format, "format", "text", formats, "output format")
	fs.BoolVar(&f.json, "json", false, "shorthand for --format json")
}

// resolve returns the format asked for; --json with another --format is
// a usage error.
func (f *formatFlags) resolve(fs *pflag.FlagSet) (string, error) {
	if f.json {
		if fs.Changed("format") && f.format != "json" {
			return "", usagef("--json and --format %s exclude each other", f.format)
		}
		return "json", nil
	}
	return f.format, nil
}
