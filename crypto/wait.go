package crypto

import (
	"sync"
	"sync/atomic"

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
// It holds only an atomic count and the result; sleeping waiters share
// package-level wait queues keyed by the CryptoWait's address. A mutex or a
// channel inside it would make Go move every CryptoWait to the heap, while
// one declared on the stack and used only with synchronous requests (which
// never wait, as in fscrypt's on-stack variants) must stay there. A
// CryptoWait that an asynchronous request completes has escaped to the heap
// anyway, through the request's callback data, so its address is stable.
type CryptoWait struct {
	done atomic.Int32
	err  error
}

// waitQueue is a wait_queue_head shared by the CryptoWaits hashed to it.
type waitQueue struct {
	mu   sync.Mutex
	cond sync.Cond
}

var waitQueues [64]waitQueue

func init() {
	for i := range waitQueues {
		waitQueues[i].cond.L = &waitQueues[i].mu
	}
}

// complete is complete(&wait->completion) with the result stored first.
func (w *CryptoWait) complete(err error) {
	q := w.queue()
	q.mu.Lock()
	w.err = err
	w.done.Add(1)
	q.cond.Broadcast()
	q.mu.Unlock()
}

// wait is wait_for_completion followed by reinit_completion; it returns the
// stored result.
func (w *CryptoWait) wait() error {
	q := w.queue()
	q.mu.Lock()
	for w.done.Load() == 0 {
		q.cond.Wait()
	}
	w.done.Store(0) // reinit_completion
	err := w.err
	q.mu.Unlock()
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
