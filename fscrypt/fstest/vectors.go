package fstest

import (
	"bufio"
	"embed"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// vectors are the known-answer files, generated with xfstests'
// fscrypt-crypt-util (testdata/README says how), compiled into the test
// binaries that use them so that no test looks for them on disk.
//
//go:embed testdata/*.txt
var vectors embed.FS

// Case is one known-answer case of fstest/testdata (see testdata/README):
// one "policy ..." line and the records after it.
type Case struct {
	Line      int
	Version   int
	Contents  string
	Filenames string
	Flags     uint8
	Key       []byte
	Nonce     []byte
	Ino       uint64
	UUID      []byte
	// Records holds the fields of each following line.
	Records [][]string
}

// String identifies the case in failure messages.
func (c *Case) String() string {
	return fmt.Sprintf("line %d: v%d %s/%s flags=0x%02x keylen=%d ino=%d", c.Line, c.Version, c.Contents, c.Filenames, c.Flags, len(c.Key), c.Ino)
}

// LoadVectors parses testdata/name. Lines before the first policy line go to a
// case with Line 0.
func LoadVectors(name string) ([]*Case, error) {
	f, err := vectors.Open("testdata/" + name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cases []*Case
	cur := &Case{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if fields[0] != "policy" {
			cur.Records = append(cur.Records, fields)
			continue
		}
		c := &Case{Line: n}
		for _, kv := range fields[1:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("%s:%d: bad field %q", name, n, kv)
			}
			switch k {
			case "version":
				c.Version, err = strconv.Atoi(v)
			case "contents":
				c.Contents = v
			case "filenames":
				c.Filenames = v
			case "flags":
				var f uint64
				f, err = strconv.ParseUint(v, 0, 8)
				c.Flags = uint8(f)
			case "key":
				c.Key, err = hex.DecodeString(v)
			case "nonce":
				c.Nonce, err = hex.DecodeString(v)
			case "ino":
				c.Ino, err = strconv.ParseUint(v, 10, 64)
			case "uuid":
				c.UUID, err = hex.DecodeString(v)
			default:
				err = fmt.Errorf("unknown field %q", k)
			}
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, n, err)
			}
		}
		if cur.Line != 0 || len(cur.Records) != 0 {
			cases = append(cases, cur)
		}
		cur = c
	}
	if cur.Line != 0 || len(cur.Records) != 0 {
		cases = append(cases, cur)
	}
	return cases, sc.Err()
}

// MustHex decodes s ("-" is empty) or panics: the files are trusted data.
func MustHex(s string) []byte {
	if s == "-" {
		return nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
