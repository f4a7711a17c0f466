package linuxdiff

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// A Normaliser rewrites what must differ between the two sides into one
// form, so that the diff shows only what should not. Each one names what
// it hides and why; each has a test showing that a real difference in the
// same lines survives it.
type Normaliser struct {
	Name string
	Why  string
	// Apply rewrites one section's lines. section is "stdout", "stderr"
	// or "dmesg".
	Apply func(section string, lines []string) []string
}

// Normalisers are applied in order to both sides.
var Normalisers = []Normaliser{
	{
		Name:  "script-prefix",
		Why:   "bash prefixes a script's own errors with its path and line (\"/batch/000/script.sh: line 3: \"), vfslab sh's interpreter a redirection's with \"sh: \"; the message after the prefix is compared",
		Apply: perLine(stripScriptPrefix),
	},
	{
		Name:  "nokey-names",
		Why:   "a no-key name encodes ciphertext under the kernel's random per-file nonce: the names differ, their number and length (the shape) do not; runs of such lines are sorted, since ls sorts by the name",
		Apply: nokeyNames,
	},
	{
		Name:  "uuid",
		Why:   "mkfs gives each filesystem a random UUID (the kernel logs it at mount)",
		Apply: perLine(func(s string) string { return uuidRE.ReplaceAllString(s, "UUID") }),
	},
	{
		Name:  "key-serials",
		Why:   "the kernel numbers keys at random (key_alloc_serial); keyctl show's first column is the serial",
		Apply: perLine(keySerial),
	},
	{
		Name: "pids",
		Why: "kernel log lines name the writing task by its PID (\"bash (639): drop_caches: 2\", \"xfs_io (pid 1005) is setting ...\"), " +
			"which is the machine's own numbering; the shell running the script is bash on Linux and vfslab sh's \"sh\"",
		Apply: func(section string, lines []string) []string {
			if section != "dmesg" {
				return lines
			}
			out := make([]string, len(lines))
			for i, l := range lines {
				l = commPidRE.ReplaceAllString(l, "$1 (PID):")
				l = pidRE.ReplaceAllString(l, "(pid PID)")
				out[i] = shellCommRE.ReplaceAllString(l, "SHELL $1")
			}
			return out
		},
	},
	{
		Name: "once-per-boot",
		Why: "fscrypt logs \"MODE using implementation DRIVER\" once per mode per boot (fscrypt_prepare_key) and " +
			"\"is setting deprecated v1 encryption policy\" and \"is setting an IV_INO_LBLK_32 encryption policy\" once per boot (pr_warn_once): whether a script's dmesg has " +
			"them depends on the scripts before it in the boot, and the driver on the CPU",
		Apply: dropLines(oncePerBootRE),
	},
	{
		Name: "emulation-noise",
		Why: "under emulation (TCG) on a loaded host the kernel notices that time jumps " +
			"(\"hrtimer: interrupt took N ns\", the clocksource watchdog giving up on the TSC): the machine's speed, not the script's",
		Apply: dropLines(emulationNoiseRE),
	},
	{
		Name: "busy-inode-number",
		Why: "fscrypt names the first inode still busy after a key's removal by number; an ext4 directory made at the root " +
			"gets its inode from the group Orlov's allocator picks by hashing its name with the filesystem's random s_hash_seed (find_group_orlov)",
		Apply: perLine(func(s string) string { return busyInoRE.ReplaceAllString(s, "${1}INO") }),
	},
	{
		Name: "f2fs-checkpoint-version",
		Why:  "mkfs.f2fs starts the checkpoint version at a random number, which f2fs logs at mount",
		Apply: perLine(func(s string) string {
			return cpVersionRE.ReplaceAllString(s, "checkpoint version = CP_VERSION")
		}),
	},
}

var (
	scriptPrefixRE = regexp.MustCompile(`^((/batch/\d+/script\.sh|/etc/vfslab/prelude\.sh): line \d+|sh): (/)?`)
	commPidRE      = regexp.MustCompile(`^(\S+) \(\d+\):`)
	pidRE          = regexp.MustCompile(`\(pid \d+\)`)
	shellCommRE    = regexp.MustCompile(`^(?:sh|bash) (\(PID\)|\(pid PID\))`)
	uuidRE         = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// keyctl show: "  12345678 --alswrv      0     0  keyring: _ses".
	keySerialRE      = regexp.MustCompile(`^ *[0-9]+( [-a-z]{8} +-?[0-9]+ +-?[0-9]+ )`)
	oncePerBootRE    = regexp.MustCompile(`^fscrypt: .* using implementation ".*"$|^\S+ \(pid \S+\) is setting deprecated v1 encryption policy; recommend upgrading to v2\.$|^\S+ \(pid \S+\) is setting an IV_INO_LBLK_32 encryption policy\.  This should only be used if there are certain hardware limitations\.$`)
	emulationNoiseRE = regexp.MustCompile(`^hrtimer: interrupt took \d+ ns$|^clocksource: |^tsc: Marking TSC unstable|^TSC found unstable after boot|^sched_clock: Marking unstable`)
	cpVersionRE      = regexp.MustCompile(`checkpoint version = [0-9a-f]+$`)
	busyInoRE        = regexp.MustCompile(`(inode\(s\) still busy after removing key with identifier [0-9a-f]+, including ino )\d+$`)
	// A no-key name: base64url (RFC 4648 §5, fscrypt's alphabet) of at
	// least 16 bytes of ciphertext.
	nokeyRE = regexp.MustCompile(`[A-Za-z0-9_-]{22,}`)
	hexRE   = regexp.MustCompile(`^[0-9a-fA-F]+$`)
)

// dropLines drops a dmesg line that re matches.
func dropLines(re *regexp.Regexp) func(string, []string) []string {
	return func(section string, lines []string) []string {
		if section != "dmesg" {
			return lines
		}
		out := lines[:0:0]
		for _, l := range lines {
			if !re.MatchString(l) {
				out = append(out, l)
			}
		}
		return out
	}
}

func perLine(f func(string) string) func(string, []string) []string {
	return func(_ string, lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = f(l)
		}
		return out
	}
}

func stripScriptPrefix(s string) string {
	if m := scriptPrefixRE.FindStringSubmatchIndex(s); m != nil {
		// A bash prefix goes whatever follows; vfslab's "sh: " only
		// before a path (its redirections' errors).
		if s[m[2]:m[3]] != "sh" || m[6] >= 0 {
			return s[m[3]+2:]
		}
	}
	return s
}

func keySerial(s string) string { return keySerialRE.ReplaceAllString(s, "SERIAL$1") }

// isNokeyName says whether a word has the look of a no-key name: long,
// in the base64url alphabet, not hex (a digest or key identifier), and
// with upper- and lower-case letters (any 22 bytes of ciphertext have both
// but for a chance below 2^-20).
func isNokeyName(w string) bool {
	if len(w) < 22 || hexRE.MatchString(w) {
		return false
	}
	return strings.ContainsAny(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(w, "abcdefghijklmnopqrstuvwxyz")
}

// nokeyNames replaces every no-key name by NOKEY_NAME{LEN} and sorts runs
// of lines that differ only in such names.
func nokeyNames(_ string, lines []string) []string {
	out := make([]string, len(lines))
	had := make([]bool, len(lines))
	for i, l := range lines {
		out[i] = replaceNokey(l, &had[i])
	}
	for i := 0; i < len(out); {
		if !had[i] {
			i++
			continue
		}
		j := i
		for j < len(out) && had[j] {
			j++
		}
		sort.Strings(out[i:j])
		i = j
	}
	return out
}

func replaceNokey(l string, had *bool) string {
	return nokeyRE.ReplaceAllStringFunc(l, func(w string) string {
		if !isNokeyName(w) {
			return w
		}
		*had = true
		return fmt.Sprintf("NOKEY_NAME{%d}", len(w))
	})
}

// Document renders one side's output as the lines the diff compares:
// a section per stream, the status, the kernel log.
func Document(o Output) []string {
	var doc []string
	if o.Err != nil {
		return []string{"== no result: " + strings.ReplaceAll(o.Err.Error(), "\n", " | ")}
	}
	section := func(name, text string) {
		doc = append(doc, "== "+name)
		if text == "" {
			return
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		for _, n := range Normalisers {
			lines = n.Apply(name, lines)
		}
		doc = append(doc, lines...)
	}
	section("stdout", o.Stdout)
	section("stderr", o.Stderr)
	doc = append(doc, "== status "+strconv.Itoa(o.Status))
	section("dmesg", o.Dmesg)
	return doc
}
