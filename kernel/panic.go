package kernel

import "strings"

// Taint flags (include/linux/panic.h), the bit numbers of the kernel's
// tainted_mask.
const (
	TAINT_PROPRIETARY_MODULE  = 0
	TAINT_FORCED_MODULE       = 1
	TAINT_CPU_OUT_OF_SPEC     = 2
	TAINT_FORCED_RMMOD        = 3
	TAINT_MACHINE_CHECK       = 4
	TAINT_BAD_PAGE            = 5
	TAINT_USER                = 6
	TAINT_DIE                 = 7
	TAINT_OVERRIDDEN_ACPI     = 8
	TAINT_WARN                = 9
	TAINT_CRAP                = 10
	TAINT_FIRMWARE_WORKAROUND = 11
	TAINT_OOT_MODULE          = 12
	TAINT_UNSIGNED_MODULE     = 13
	TAINT_SOFTLOCKUP          = 14
	TAINT_LIVEPATCH           = 15
	TAINT_AUX                 = 16
	TAINT_RANDSTRUCT          = 17
	TAINT_TEST                = 18
	TAINT_FLAGS_COUNT         = 19
)

// taintChars are the letters of kernel/panic.c taint_flags[], in bit
// order: the letter when set, and when clear (' ', except 'G' for bit 0).
var taintChars = [TAINT_FLAGS_COUNT][2]byte{
	{'P', 'G'}, {'F', ' '}, {'S', ' '}, {'R', ' '}, {'M', ' '}, {'B', ' '},
	{'U', ' '}, {'D', ' '}, {'A', ' '}, {'W', ' '}, {'C', ' '}, {'I', ' '},
	{'O', ' '}, {'E', ' '}, {'L', ' '}, {'K', ' '}, {'X', ' '}, {'T', ' '},
	{'N', ' '},
}

// AddTaint sets taint flag flag on the machine (kernel/panic.c add_taint).
func (k *Kernel) AddTaint(flag uint) {
	for {
		old := k.tainted.Load()
		if k.tainted.CompareAndSwap(old, old|1<<flag) {
			return
		}
	}
}

// TestTaint reports whether flag is set (test_taint).
func (k *Kernel) TestTaint(flag uint) bool { return k.tainted.Load()&(1<<flag) != 0 }

// Tainted returns the taint mask, as /proc/sys/kernel/tainted reads it
// (get_taint).
func (k *Kernel) Tainted() uint64 { return k.tainted.Load() }

// PrintTainted renders the taint state as the header of an oops does
// (print_tainted): "Not tainted", or "Tainted: " and one letter per flag
// in bit order, a blank for a clear flag ('G' for a clear bit 0).
func (k *Kernel) PrintTainted() string {
	m := k.tainted.Load()
	if m == 0 {
		return "Not tainted"
	}
	var b strings.Builder
	b.WriteString("Tainted: ")
	for i, c := range taintChars {
		if m&(1<<i) != 0 {
			b.WriteByte(c[0])
		} else {
			b.WriteByte(c[1])
		}
	}
	return b.String()
}
