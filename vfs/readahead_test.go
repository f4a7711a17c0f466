package vfs

import "testing"

// TestRASizes: the window sizes of mm/readahead.c with the default
// ra_pages 32 (its comment: "1-2 page = 16k, 3-4 page 32k, 5-8 page =
// 64k, > 8 page = 128k initial"), and the ramp-up: x4 below max/16, x2 up
// to max/2, then max.
func TestRASizes(t *testing.T) {
	for _, c := range []struct{ req, want uint64 }{{1, 4}, {2, 4}, {3, 8}, {4, 8}, {5, 16}, {8, 16}, {9, 32}, {64, 32}} {
		if got := getInitRASize(c.req, 32); got != c.want {
			t.Errorf("get_init_ra_size(%d, 32) = %d, want %d", c.req, got, c.want)
		}
	}
	for _, c := range []struct{ cur, max, want uint64 }{{1, 32, 4}, {4, 32, 8}, {8, 32, 16}, {16, 32, 32}, {32, 32, 32}, {64, 64, 64}, {4, 256, 16}} {
		if got := getNextRASize(&FileRAState{Size: c.cur}, c.max); got != c.want {
			t.Errorf("get_next_ra_size(%d, %d) = %d, want %d", c.cur, c.max, got, c.want)
		}
	}
	if ffs(64) != 7 || ffs(1) != 1 || ffs(0) != 0 || roundupPowOfTwo(5) != 8 || roundupPowOfTwo(1) != 1 {
		t.Error("ffs or roundup_pow_of_two")
	}
}
