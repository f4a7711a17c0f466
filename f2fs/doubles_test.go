package f2fs

import "github.com/vfslab/vfslab/internal/fstestutil"

// The directory code's tests use the shared doubles: a Unicode map that
// folds ASCII (and ß), and a filename "encryption" with fscrypt's shapes.
type (
	asciiFold = fstestutil.AsciiFold
	toyCrypt  = fstestutil.ToyCrypt
)
