package ext4

import "testing"

// TestMaxSizes pins ext4_max_size (s_maxbytes, extent-mapped files) and
// ext4_max_bitmap_size (s_bitmap_maxbytes, block-mapped files) for each
// block size, with and without huge_file: 2^32 - 1 blocks for extents;
// for block maps the direct, indirect, double and triple indirect blocks
// (about 16 GiB with 1 KiB blocks, 4 TiB with 4 KiB), or 2^32 - 1 sectors
// of i_blocks without huge_file (2 TiB with 4 KiB blocks).
func TestMaxSizes(t *testing.T) {
	for _, c := range []struct {
		bits           uint
		huge           bool
		extent, bitmap int64
	}{
		{10, true, 4398046510080, 17247252480},
		{11, true, 8796093020160, 275415851008},
		{12, true, 17592186040320, 4402345721856},
		{12, false, 2199023251456, 2196873666560},
		{16, true, 281474976645120, 288247969412284416},
	} {
		if got := ext4MaxSize(c.bits, c.huge); got != c.extent {
			t.Errorf("ext4_max_size(%d, %t) = %d, want %d", c.bits, c.huge, got, c.extent)
		}
		if got := ext4MaxBitmapSize(c.bits, c.huge); got != c.bitmap {
			t.Errorf("ext4_max_bitmap_size(%d, %t) = %d, want %d", c.bits, c.huge, got, c.bitmap)
		}
	}
	if maxFileSize != 1<<44-4096 {
		t.Errorf("growing device's s_maxbytes %d", maxFileSize)
	}
}
