package shell

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The machine's clock (vfs.System.Now): it starts at vfs.ClockEpoch and
// moves only with sleep, so that a script's output, timestamps included,
// is the same every run; sleep returns at once.

// cmdSleep is sleep(1): the machine's clock moves forward by the sum of
// the arguments (NUMBER[smhd], fractions allowed).
func cmdSleep(c *cmd) int {
	if len(c.args) == 0 {
		c.errf("missing operand")
		fmt.Fprintf(c.errw, "Try 'sleep --help' for more information.\n")
		return 1
	}
	var total time.Duration
	for _, a := range c.args {
		unit := time.Second
		num := a
		if n := len(a); n > 0 {
			switch a[n-1] {
			case 's':
				num = a[:n-1]
			case 'm':
				unit, num = time.Minute, a[:n-1]
			case 'h':
				unit, num = time.Hour, a[:n-1]
			case 'd':
				unit, num = 24*time.Hour, a[:n-1]
			}
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v < 0 || strings.ContainsAny(num, "xXpPeEnN") {
			c.errf("invalid time interval '%s'", a)
			fmt.Fprintf(c.errw, "Try 'sleep --help' for more information.\n")
			return 1
		}
		total += time.Duration(v * float64(unit))
	}
	c.m.mu.Lock()
	c.m.sys.AdvanceClock(total)
	c.m.mu.Unlock()
	return 0
}

// cmdDate is date(1) for the machine's clock (UTC, the C locale): the
// default format, or +FORMAT with strftime's conversions as GNU date
// reads them (flags - _ 0 ^ #, a field width, %:z). -u is accepted (the
// clock is UTC); setting the date is refused.
func cmdDate(c *cmd) int {
	format := "%a %b %e %H:%M:%S %Z %Y"
	var operands []string
	for i, a := range c.args {
		switch {
		case a == "--":
			operands = append(operands, c.args[i+1:]...)
		case a == "-u" || a == "--utc" || a == "--universal":
			continue
		case len(a) > 1 && a[0] == '-':
			c.badOption(a)
			return 1
		default:
			operands = append(operands, a)
			continue
		}
		if a == "--" {
			break
		}
	}
	if len(operands) > 1 {
		c.errf("extra operand '%s'", operands[1])
		fmt.Fprintf(c.errw, "Try 'date --help' for more information.\n")
		return 1
	}
	if len(operands) == 1 {
		if !strings.HasPrefix(operands[0], "+") {
			// date MMDDhhmm sets the clock, which is the machine's
			// alone.
			c.errf("invalid date '%s'", operands[0])
			return 1
		}
		format = operands[0][1:]
	}
	c.m.mu.Lock()
	now := stamp(c.m.sys.Now())
	c.m.mu.Unlock()
	fmt.Fprintln(c.out, strftime(format, now))
	return 0
}

// strftime formats t as glibc's strftime does in the C locale, with GNU
// date's additions: the flags - (no padding), _ (spaces), 0 (zeros), ^
// (upper case) and # (swap case), a field width, %N (nanoseconds) and
// %:z. An unknown conversion is copied as it stands.
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		start := i
		i++
		var pad byte // 0: the conversion's own
		upper, swap := false, false
		for ; i < len(format) && strings.IndexByte("-_0^#", format[i]) >= 0; i++ {
			switch format[i] {
			case '-', '_', '0':
				pad = format[i]
			case '^':
				upper = true
			case '#':
				swap = true
			}
		}
		width := -1
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			if width < 0 {
				width = 0
			}
			width = width*10 + int(format[i]-'0')
		}
		colon := false
		if i < len(format) && format[i] == ':' && i+1 < len(format) && format[i+1] == 'z' {
			colon = true
			i++
		}
		if i == len(format) {
			b.WriteString(format[start:])
			break
		}
		text, num, ok := conversion(format[i], t, colon, width)
		if !ok {
			b.WriteString(format[start : i+1])
			continue
		}
		if num.digits > 0 {
			text = padNumber(num, pad, width)
		} else {
			if swap {
				if strings.ToUpper(text) == text {
					text = strings.ToLower(text)
				} else {
					text = strings.ToUpper(text)
				}
			}
			if upper {
				text = strings.ToUpper(text)
			}
			if width > len(text) {
				fill := " "
				if pad == '0' {
					fill = "0"
				}
				text = strings.Repeat(fill, width-len(text)) + text
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// number is a numeric conversion: its value, its default width and the
// padding it takes by default ('0' or ' ').
type number struct {
	v      int64
	digits int
	pad    byte
}

// padNumber renders n with the flag's padding (or n's own) to width (or
// n's own digits).
func padNumber(n number, flag byte, width int) string {
	w := n.digits
	if width >= 0 {
		w = width
	}
	p := n.pad
	switch flag {
	case '-':
		return strconv.FormatInt(n.v, 10)
	case '_':
		p = ' '
	case '0':
		p = '0'
	}
	neg := n.v < 0
	s := strconv.FormatInt(max(n.v, -n.v), 10)
	if neg {
		w--
	}
	if len(s) < w {
		s = strings.Repeat(string(p), w-len(s)) + s
	}
	if neg {
		if p == ' ' {
			trim := strings.TrimLeft(s, " ")
			return s[:len(s)-len(trim)] + "-" + trim
		}
		s = "-" + s
	}
	return s
}

// conversion is one strftime conversion of t: text, or a number to pad.
func conversion(conv byte, t time.Time, colon bool, width int) (string, number, bool) {
	num := func(v int64, digits int, pad byte) (string, number, bool) {
		return "", number{v, digits, pad}, true
	}
	hour12 := int64(t.Hour() % 12)
	if hour12 == 0 {
		hour12 = 12
	}
	isoYear, isoWeek := t.ISOWeek()
	yday := t.YearDay() - 1
	wday := int(t.Weekday())
	switch conv {
	case '%':
		return "%", number{}, true
	case 'a':
		return t.Format("Mon"), number{}, true
	case 'A':
		return t.Format("Monday"), number{}, true
	case 'b', 'h':
		return t.Format("Jan"), number{}, true
	case 'B':
		return t.Format("January"), number{}, true
	case 'c':
		return strftime("%a %b %e %H:%M:%S %Y", t), number{}, true
	case 'C':
		return num(int64(t.Year()/100), 2, '0')
	case 'd':
		return num(int64(t.Day()), 2, '0')
	case 'D', 'x':
		return strftime("%m/%d/%y", t), number{}, true
	case 'e':
		return num(int64(t.Day()), 2, ' ')
	case 'F':
		return strftime("%Y-%m-%d", t), number{}, true
	case 'g':
		return num(int64(isoYear%100), 2, '0')
	case 'G':
		return num(int64(isoYear), 4, '0')
	case 'H':
		return num(int64(t.Hour()), 2, '0')
	case 'I':
		return num(hour12, 2, '0')
	case 'j':
		return num(int64(yday+1), 3, '0')
	case 'k':
		return num(int64(t.Hour()), 2, ' ')
	case 'l':
		return num(hour12, 2, ' ')
	case 'm':
		return num(int64(t.Month()), 2, '0')
	case 'M':
		return num(int64(t.Minute()), 2, '0')
	case 'n':
		return "\n", number{}, true
	case 'N':
		ns := fmt.Sprintf("%09d", t.Nanosecond())
		if width > 0 && width < 9 {
			ns = ns[:width] // %3N: milliseconds, truncated as GNU date does
		}
		return ns, number{}, true
	case 'p':
		return t.Format("PM"), number{}, true
	case 'P':
		return strings.ToLower(t.Format("PM")), number{}, true
	case 'r':
		return strftime("%I:%M:%S %p", t), number{}, true
	case 'R':
		return strftime("%H:%M", t), number{}, true
	case 's':
		return num(t.Unix(), 1, '0')
	case 'S':
		return num(int64(t.Second()), 2, '0')
	case 't':
		return "\t", number{}, true
	case 'T', 'X':
		return strftime("%H:%M:%S", t), number{}, true
	case 'u':
		return num(int64((wday+6)%7+1), 1, '0')
	case 'U':
		return num(int64((yday+7-wday)/7), 2, '0')
	case 'V':
		return num(int64(isoWeek), 2, '0')
	case 'w':
		return num(int64(wday), 1, '0')
	case 'W':
		return num(int64((yday+7-(wday+6)%7)/7), 2, '0')
	case 'y':
		return num(int64(t.Year()%100), 2, '0')
	case 'Y':
		return num(int64(t.Year()), 1, '0')
	case 'z':
		if colon {
			return t.Format("-07:00"), number{}, true
		}
		return t.Format("-0700"), number{}, true
	case 'Z':
		return t.Format("MST"), number{}, true
	}
	return "", number{}, false
}
