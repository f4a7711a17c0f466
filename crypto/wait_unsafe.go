package crypto

import "unsafe"

// queue is the wait queue of w, hashed from its address as the kernel's
// bit_waitqueue hashes a word's.
func (w *CryptoWait) queue() *waitQueue {
	a := uintptr(unsafe.Pointer(w))
	return &waitQueues[(a>>4^a>>10)%uintptr(len(waitQueues))]
}
