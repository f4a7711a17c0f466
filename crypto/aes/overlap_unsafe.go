package aes

import "unsafe"

// InexactOverlap reports whether x and y share memory without starting at
// the same address: the one overlap the modes refuse (EINVAL), since in
// place (the same start) works and any other overlap would read what was
// already written. Package crypto and the wide-block modes use it too.
func InexactOverlap(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 || &x[0] == &y[0] {
		return false
	}
	x0 := uintptr(unsafe.Pointer(&x[0]))
	y0 := uintptr(unsafe.Pointer(&y[0]))
	return x0 < y0+uintptr(len(y)) && y0 < x0+uintptr(len(x))
}
