package draw

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/vfslab/vfslab/errno"
	"github.com/vfslab/vfslab/teach"
)

// parsed is an SVG document read back with encoding/xml: the texts of its
// <text> elements and the classes of its shapes.
type parsed struct {
	texts   []string
	classes map[string]int
}

func parseSVG(t *testing.T, doc string) parsed {
	t.Helper()
	p := parsed{classes: map[string]int{}}
	dec := xml.NewDecoder(strings.NewReader(doc))
	var inText bool
	var cur strings.Builder
	sawSVG := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "svg" {
				sawSVG = e.Name.Space == "http://www.w3.org/2000/svg"
			}
			if e.Name.Local == "text" {
				inText = true
				cur.Reset()
			}
			for _, a := range e.Attr {
				if a.Name.Local == "class" {
					p.classes[a.Value]++
				}
			}
		case xml.CharData:
			if inText {
				cur.Write(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText = false
				p.texts = append(p.texts, cur.String())
			}
		}
	}
	if !sawSVG {
		t.Fatal("no <svg> element in the SVG namespace")
	}
	return p
}

func (p parsed) has(t *testing.T, labels ...string) {
	t.Helper()
	all := strings.Join(p.texts, "\n")
	for _, l := range labels {
		if !strings.Contains(all, l) {
			t.Errorf("no label %q in:\n%s", l, all)
		}
	}
}

// svg(t) parses the picture a drawing function returned, failing the
// test on its error.
func svg(t *testing.T) func(doc string, err error) parsed {
	return func(doc string, err error) parsed {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return parseSVG(t, doc)
	}
}

func TestDentries(t *testing.T) {
	p := svg(t)(Dentries(teach.Config{FS: "ext4"}, false, []string{"/tmp/missing"}, []string{"/tmp/hello"}))
	p.has(t, "/", "tmp", "hello", "dir", "link", "missing", "negative", "symlink")
	// /tmp/hello is held open: its dentry has one reference; /tmp's
	// children each hold one on it.
	all := strings.Join(p.texts, "|")
	if !strings.Contains(all, "hello|d_lockref.count=1") {
		t.Errorf("held file's count not 1: %s", all)
	}
	if p.classes["dentry"] < 6 || p.classes["d_parent"] != p.classes["dentry"]-1 {
		t.Errorf("dentries %d, d_parent arrows %d", p.classes["dentry"], p.classes["d_parent"])
	}
	// Cold: the unused dentries are gone.
	cold := svg(t)(Dentries(teach.Config{}, true, nil, nil))
	if cold.classes["dentry"] >= p.classes["dentry"] {
		t.Errorf("cold tree has %d dentries, warm %d", cold.classes["dentry"], p.classes["dentry"])
	}
}

func TestKeys(t *testing.T) {
	p := svg(t)(Keys("ext4", false, true))
	p.has(t, "HKDF_CONTEXT_KEY_IDENTIFIER (1)", "HKDF_CONTEXT_PER_FILE_ENC_KEY (2)", "HKDF_CONTEXT_DIRECT_KEY (3)",
		"HKDF_CONTEXT_IV_INO_LBLK_64_KEY (4)", "HKDF_CONTEXT_DIRHASH_KEY (5)", "HKDF_CONTEXT_IV_INO_LBLK_32_KEY (6)",
		"HKDF_CONTEXT_INODE_HASH_KEY (7)", "/secret/note", "AES-256-XTS key, 64 bytes", "AES-256-CTS-CBC key, 32 bytes",
		"/secret/cf", "SipHash-2-4 dirhash key")
	// Without a casefolded directory, no dirhash key is derived.
	q := svg(t)(Keys(teach.DefaultFS, false, false))
	if strings.Contains(strings.Join(q.texts, "\n"), "SipHash-2-4 dirhash key") {
		t.Error("dirhash key without a casefolded directory")
	}
}

func TestReadPath(t *testing.T) {
	p := svg(t)(ReadPaths([]string{"workqueue", "inline", "chain", "bio"}, 4))
	p.has(t, "crypto-bio=workqueue", "crypto-bio=inline", "crypto-bio=chain", "crypto-bio=bio",
		"fscrypt_read_queue worker", "one whole-bio request", "chained requests", "4 data units")
	if p.classes["stage"] != 8+7+7+7 {
		t.Errorf("%d stages", p.classes["stage"])
	}
}

func TestF2fsAndHtree(t *testing.T) {
	p := parseSVG(t, F2fsBuckets("a&b<c>", 6, 0))
	p.has(t, `name "a&b<c>"`, "level 5", "32 bucket(s) × 2 blocks")
	h := svg(t)(Htree("report.txt", 11, 4))
	h.has(t, "DRAWN FROM THE NAMES' HASHES", "dx_root (block 0)", "leaf 0", "leaf 2", "report.txt")
	if h.classes["leaf"] != 3 {
		t.Errorf("%d leaves for 12 names, 4 per leaf", h.classes["leaf"])
	}
}

// TestUnknownFilesystem: a filesystem no one registered is the machine's
// error, not a panic.
func TestUnknownFilesystem(t *testing.T) {
	if _, err := Dentries(teach.Config{FS: "btrfs"}, false, nil, nil); err == nil {
		t.Error("dentries on btrfs: no error")
	}
	if _, err := Keys("memfs", false, false); !errors.Is(err, errno.EOPNOTSUPP) {
		t.Errorf("keys on memfs: %v, want EOPNOTSUPP", err)
	}
}
