package crypto

import (
	"sync"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/kernel"
)

// CryptoWait is struct crypto_wait (include/linux/crypto.h): a completion
// and the result it carries. The zero value is ready, which is what
// DECLARE_CRYPTO_WAIT(wait) gives: declare `var wait crypto.CryptoWait`.
// Used with CryptoReqDone as a request's completion and CryptoWaitReq to
// wait; after a wait the completion is re-armed (reinit_completion), so the
// same CryptoWait serves the next request.
//
// Waiting costs nothing until a request is actually asynchronous: the
// channel a waiter sleeps on is made only then.
type CryptoWait struct {
	mu   sync.Mutex
	done int
	ch   chan struct{}
	err  error
}

// complete is complete(&wait->completion) with the result stored first.
func (w *CryptoWait) complete(err error) {
	w.mu.Lock()
	w.err = err
	w.done++
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.mu.Unlock()
}

// wait is wait_for_completion followed by reinit_completion; it returns the
// stored result.
func (w *CryptoWait) wait() error {
	w.mu.Lock()
	for w.done == 0 {
		if w.ch == nil {
			w.ch = make(chan struct{})
		}
		ch := w.ch
		w.mu.Unlock()
		<-ch
		w.mu.Lock()
	}
	w.done = 0 // reinit_completion
	err := w.err
	w.mu.Unlock()
	return err
}

// CryptoReqDone is crypto_req_done: the completion for requests waited on
// with a CryptoWait passed as the callback data. An EINPROGRESS notification
// (a backlogged request entering the queue) is ignored; any other result is
// stored and the waiter woken.
func CryptoReqDone(data any, err error) {
	if err == errno.EINPROGRESS {
		return
	}
	data.(*CryptoWait).complete(err)
}

// CryptoWaitReq is crypto_wait_req: when err is EINPROGRESS or EBUSY the
// request was queued by an asynchronous driver (EBUSY: in its backlog, with
// CRYPTO_TFM_REQ_MAY_BACKLOG), so it waits for the completion and returns
// the request's result; any other err is returned as is. It counts a
// crypto_wait_sleep event when it waits.
func CryptoWaitReq(t *kernel.Task, err error, wait *CryptoWait) error {
	switch err {
	case errno.EINPROGRESS, errno.EBUSY:
		t.Inc(EvWaitSleep)
		return wait.wait()
	}
	return err
}
