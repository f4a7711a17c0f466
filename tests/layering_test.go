package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the module path every package's import path starts with.
const module = "github.com/vfslab/vfslab"

// layers ranks the packages as docs/ARCHITECTURE.md draws them: a package
// may import its own layer (the foundation's packages among themselves,
// crypto's modes and ciphers) and the layers below, never one above. The
// packages that hold tests only (tests, internal/fstestutil) sit with
// what they test.
var layers = [][]string{
	{"errno", "events", "kmem", "rcu", "patch", "kernel", "fsunicode", "block", "keys", "linuxvm", "internal/nsmodel"},
	{"crypto", "crypto/aes", "crypto/adiantum", "crypto/hctr2"},
	{"fscrypt", "fscrypt/bare", "fscrypt/fstest"},
	{"dcache"},
	{"vfs"},
	{"hooks"},
	{"libfs"},
	{"ext4", "f2fs", "memfs", "internal/fstestutil"},
	{"sim", "teach", "shell", "tests", "tests/conformance", "review/fault"},
	{"quiz", "draw", "review", "linuxdiff"},
	{"cmd/vfslab"},
}

// TestLayering reads every Go file's imports and fails when a package
// imports one above it, when a file imports unsafe without being named
// *_unsafe.go (as gVisor names them), or when a package has no layer: a new package is
// placed deliberately, here and in docs/ARCHITECTURE.md. External test
// packages (package x_test) may import upward, as Go allows: that is
// where a layer's tests run it under the filesystems above it.
func TestLayering(t *testing.T) {
	rank := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			rank[p] = i
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		seen[pkg] = true
		for _, imp := range f.Imports {
			if imp.Path.Value == `"unsafe"` && !strings.HasSuffix(strings.TrimSuffix(name, "_test.go"), "_unsafe") && !strings.HasSuffix(name, "_unsafe.go") {
				bad = append(bad, rel+"/"+name+" imports unsafe: name it *_unsafe.go")
			}
		}
		if strings.HasSuffix(f.Name.Name, "_test") {
			return nil
		}
		r, ok := rank[pkg]
		if !ok {
			bad = append(bad, pkg+": no layer (add it to layers and to docs/ARCHITECTURE.md)")
			return nil
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			if dr, ok := rank[dep]; !ok || dr > r {
				bad = append(bad, rel+"/"+name+" imports "+dep+", a layer above "+pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range rank {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil && !seen[p] {
			bad = append(bad, p+": in layers but holds no Go file")
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
