package fsunicode

import (
	"bytes"
	"testing"
)

// FuzzCasefold checks, for arbitrary bytes, that nothing panics and that the
// functions agree with each other: the 255-byte fold is the unbounded fold
// when that fits, a name compares equal to itself unless the kernel rejects
// it, the folded comparison agrees with the plain one, and the hash fails
// exactly when folding does.
//
//	go test -run=^$ -fuzz=FuzzCasefold ./fsunicode
func FuzzCasefold(f *testing.F) {
	for _, v := range kunitNFDICF {
		f.Add(v.str, v.ncf)
	}
	for _, kc := range kernelCases {
		f.Add([]byte(kc.a), []byte(kc.b))
	}
	um, err := Load("12.1.0")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		big := make([]byte, 4*len(a)+1)
		n, err := um.Casefold(big, a)
		bad := kernelRejects(a)
		if (err != nil) != bad {
			t.Fatalf("Casefold(%q): %v, kernel rejects %v", a, err, bad)
		}
		var buf [MaxNameLen]byte
		m, err255 := um.Casefold(buf[:], a)
		switch {
		case err == nil && n < MaxNameLen:
			if err255 != nil || m != n || !bytes.Equal(buf[:m], big[:n]) {
				t.Fatalf("Casefold(%q) into 255 bytes = %d %v, unbounded %d", a, m, err255, n)
			}
		case err255 == nil:
			t.Fatalf("Casefold(%q) into 255 bytes succeeded with %d, unbounded %d %v", a, m, n, err)
		}
		if _, err := um.CasefoldHash(0, a); (err != nil) != bad {
			t.Fatalf("CasefoldHash(%q): %v, kernel rejects %v", a, err, bad)
		}
		r, _ := um.Strncasecmp(a, a)
		if (r != 0) != bad {
			t.Fatalf("Strncasecmp(%q, itself) = %d", a, r)
		}
		r, rerr := um.Strncasecmp(a, b)
		if err == nil && rerr == nil {
			rf, ferr := um.StrncasecmpFolded(big[:n], b)
			if ferr != nil || rf != r {
				t.Fatalf("StrncasecmpFolded(%q, %q) = %d %v, Strncasecmp = %d", big[:n], b, rf, ferr, r)
			}
		}
		um.Strncmp(a, b)
		um.Normalize(buf[:], b)
		um.Validate(b)
	})
}
