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

// cmdDate is date(1) for the machine's clock: the default format, or
// +%s.
func cmdDate(c *cmd) int {
	c.m.mu.Lock()
	now := stamp(c.m.sys.Now())
	c.m.mu.Unlock()
	if len(c.args) == 1 && c.args[0] == "+%s" {
		fmt.Fprintln(c.out, now.Unix())
		return 0
	}
	fmt.Fprintln(c.out, now.Format("Mon Jan _2 15:04:05 MST 2006"))
	return 0
}
