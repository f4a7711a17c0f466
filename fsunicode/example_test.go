package fsunicode_test

import (
	"fmt"

	"github.com/vfslab/vfslab/fsunicode"
)

// A lookup in a casefolded directory, as generic_ci_match does it: fold the
// looked-up name once into a name-sized buffer, then compare each directory
// entry with it.
func Example() {
	um, err := fsunicode.Load("12.1.0")
	if err != nil {
		panic(err)
	}
	var buf [fsunicode.MaxNameLen]byte
	n, err := um.Casefold(buf[:], []byte("STRASSE.txt"))
	if err != nil {
		panic(err)
	}
	folded := buf[:n]
	fmt.Printf("folded: %q\n", folded)
	for _, entry := range []string{"straße.TXT", "Strasse.txt\u200b", "strase.txt", "stra\xffe.txt"} {
		r, err := um.StrncasecmpFolded(folded, []byte(entry))
		fmt.Printf("%q: %d %v\n", entry, r, err)
	}
	// Output:
	// folded: "strasse.txt"
	// "straße.TXT": 0 <nil>
	// "Strasse.txt\u200b": 0 <nil>
	// "strase.txt": 1 <nil>
	// "stra\xffe.txt": -22 invalid argument
}

// A 255-byte name does not fit the kernel's 255-byte buffer once its NUL is
// added, so ext4 and f2fs cannot fold it and use the raw name.
func ExampleMap_Casefold() {
	um, _ := fsunicode.Load("12.1.0")
	var buf [fsunicode.MaxNameLen]byte
	name := make([]byte, 255)
	for i := range name {
		name[i] = 'A'
	}
	_, err := um.Casefold(buf[:], name)
	fmt.Println(err)
	n, err := um.Casefold(buf[:], name[:254])
	fmt.Println(n, err)
	// Output:
	// invalid argument
	// 254 <nil>
}
