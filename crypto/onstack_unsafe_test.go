package crypto

import (
	"testing"
	"unsafe"
)

// TestSyncRequestOnStackSize: SYNC_SKCIPHER_REQUEST_ON_STACK declares
// sizeof(struct skcipher_request) + MAX_SYNC_SKCIPHER_REQSIZE bytes, and so
// does the model (its header copies living in the context area), while
// still reporting the full context room.
func TestSyncRequestOnStackSize(t *testing.T) {
	var r SyncSkcipherRequestOnStack
	if got, want := int(unsafe.Sizeof(r)), SizeofSkcipherRequest+MaxSyncSkcipherReqSize; got != want {
		t.Errorf("sizeof(SyncSkcipherRequestOnStack) = %d, want %d", got, want)
	}
	if r.CtxSize() != MaxSyncSkcipherReqSize {
		t.Errorf("CtxSize %d", r.CtxSize())
	}
}
