package shell

import (
	"strings"
	"testing"
	"time"
)

// TestStrftime checks date's formats against GNU date's output (date -u
// -d @T +FORMAT, coreutils 9, the C locale) at times that cross years,
// ISO weeks and a leap day.
func TestStrftime(t *testing.T) {
	const format = "%F %T|%a %A %b %B|%j %U %W %V %G %g %u %w|%e|%-d|%_m|%^a|%#Z|%10Y|%s|%:z|%I %l %p %P|%C|%-j|%_5S|%r|%D|%h"
	cases := []struct {
		sec  int64
		want string
	}{
		{1767225600, "2026-01-01 00:00:00|Thu Thursday Jan January|001 00 00 01 2026 26 4 4| 1|1| 1|THU|utc|0000002026|1767225600|+00:00|12 12 AM am|20|1|    0|12:00:00 AM|01/01/26|Jan"},
		{1704067199, "2023-12-31 23:59:59|Sun Sunday Dec December|365 53 52 52 2023 23 7 0|31|31|12|SUN|utc|0000002023|1704067199|+00:00|11 11 PM pm|20|365|   59|11:59:59 PM|12/31/23|Dec"},
		{1609459200, "2021-01-01 00:00:00|Fri Friday Jan January|001 00 00 53 2020 20 5 5| 1|1| 1|FRI|utc|0000002021|1609459200|+00:00|12 12 AM am|20|1|    0|12:00:00 AM|01/01/21|Jan"},
		{1735689599, "2024-12-31 23:59:59|Tue Tuesday Dec December|366 52 53 01 2025 25 2 2|31|31|12|TUE|utc|0000002024|1735689599|+00:00|11 11 PM pm|20|366|   59|11:59:59 PM|12/31/24|Dec"},
		{951782400, "2000-02-29 00:00:00|Tue Tuesday Feb February|060 09 09 09 2000 00 2 2|29|29| 2|TUE|utc|0000002000|951782400|+00:00|12 12 AM am|20|60|    0|12:00:00 AM|02/29/00|Feb"},
		{2000000000, "2033-05-18 03:33:20|Wed Wednesday May May|138 20 20 20 2033 33 3 3|18|18| 5|WED|utc|0000002033|2000000000|+00:00|03  3 AM am|20|138|   20|03:33:20 AM|05/18/33|May"},
	}
	for _, c := range cases {
		if got := strftime(format, time.Unix(c.sec, 0).UTC()); got != c.want {
			t.Errorf("@%d:\n got %s\nwant %s", c.sec, got, c.want)
		}
	}
	ns := time.Unix(2000000000, 123456789).UTC()
	if got := strftime("%N|%3N|%6N|%-N|%Q|100%%|%", ns); got != "123456789|123|123456|123456789|%Q|100%|%" {
		t.Errorf("%%N and the literals: %s", got)
	}
}

// TestDate runs date on the machine: its clock, the formats, sleep moving
// it, and the errors GNU date gives.
func TestDate(t *testing.T) {
	out, st := runScript(t, "", "-c", `date; date +%Y-%m; sleep 90061; date '+%F %T %s'; date -u +%H; date -x; date foo; date +%s +%s`)
	want := "Thu Jan  1 00:00:00 UTC 2026\n2026-01\n2026-01-02 01:01:01 1767315661\n01\n" +
		"date: invalid option -- 'x'\nTry 'date --help' for more information.\n" +
		"date: invalid date 'foo'\n" +
		"date: extra operand '+%s'\nTry 'date --help' for more information.\n"
	if st != 1 || out != want {
		t.Errorf("status %d, output:\n%s\nwant:\n%s", st, out, want)
	}
	if strings.Contains(out, "2006") {
		t.Error("Go's reference time leaked into the output")
	}
}
