package crypto

import "unsafe"

// stackReqExtra is how much more than struct skcipher_request the model's
// request header takes (its inline IV and scatterlist copies). The array
// above would have a negative length, a compile error, if it exceeded the
// context area.
const stackReqExtra = int(unsafe.Sizeof(stackReq{})) - SizeofSkcipherRequest

// CtxSize returns the context room of the declaration: sizeof(C).
func (r *SkcipherRequestOnStack[C]) CtxSize() int { return int(unsafe.Sizeof(r.ctx)) }
