package ext4

import "github.com/vfslab/vfslab/internal/fstestutil"

// The directory code's tests use the shared Unicode map double, which
// folds ASCII (and ß); encrypted names are package fscrypt's.
type asciiFold = fstestutil.AsciiFold
