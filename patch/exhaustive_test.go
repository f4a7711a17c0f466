package patch_test

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/vfslab/vfslab/patch"
	// sim imports every package that declares a patch (through its
	// workloads), so that the registry below holds them all.
	_ "github.com/vfslab/vfslab/sim"
)

const patchPkg = "github.com/vfslab/vfslab/patch"

// enumInfo is a variant enum type found in the source: its constants'
// values and names, and the patch variable Bind tied it to.
type enumInfo struct {
	name   string // package path + "." + type name
	consts map[int64]string
	dup    []string // constants whose value another one has
	patch  string   // package path + "." + the patch variable
	pos    string
}

// registration is a patch.Register call found in the source.
type registration struct {
	id       string
	variable string // package path + "." + variable name
	variants int    // elements of the Variants literal; -1 when not a literal
	pos      string
}

// moduleSource is what the source analysis found, computed once.
type moduleSource struct {
	enums    map[string]*enumInfo     // by type name
	regs     map[string]*registration // by variable
	problems []string
}

var (
	srcOnce sync.Once
	src     *moduleSource
	srcErr  error
)

// loadModule type-checks every package of the module, tests included, and
// collects the variant enums, the registrations and the problems the rules
// below find.
func loadModule(t *testing.T) *moduleSource {
	t.Helper()
	srcOnce.Do(func() { src, srcErr = analyze() })
	if srcErr != nil {
		t.Fatal(srcErr)
	}
	return src
}

func analyze() (*moduleSource, error) {
	// The module's packages without their tests (type-checking every
	// package's test variants too cost ten times as much), then the patch
	// package with its tests, whose test patches the run-time check
	// meets in this binary's registry.
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo
	pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: ".."}, "./...")
	if err != nil {
		return nil, err
	}
	own, err := packages.Load(&packages.Config{Mode: mode, Dir: "..", Tests: true}, "./patch")
	if err != nil {
		return nil, err
	}
	pkgs = append(pkgs, own...)
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("loading the module: %s", strings.Join(errs, "; "))
	}
	ms := &moduleSource{enums: map[string]*enumInfo{}, regs: map[string]*registration{}}
	seen := map[string]bool{} // problem lines, deduplicated across test variants
	problem := func(fset *token.FileSet, pos token.Pos, format string, args ...any) {
		line := fmt.Sprintf("%s: %s", fset.Position(pos), fmt.Sprintf(format, args...))
		if !seen[line] {
			seen[line] = true
			ms.problems = append(ms.problems, line)
		}
	}
	// Pass 1: Bind and Register calls, in every package.
	binders := map[string]bool{} // packages that bind a patch outside tests
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			test := strings.HasSuffix(p.Fset.Position(f.Pos()).Filename, "_test.go")
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				switch fn := calledFunc(p.TypesInfo, call); {
				case fn == nil:
				case fn.Pkg().Path() == patchPkg && fn.Name() == "Bind":
					binders[p.PkgPath] = binders[p.PkgPath] || !test
					recordBind(ms, p, call, problem)
				case fn.Pkg().Path() == patchPkg && fn.Name() == "Register":
					recordRegister(ms, p, f, call, test, problem)
				}
				return true
			})
		}
	}
	// Pass 2: switches, comparisons and untyped reads of a variant.
	for _, p := range pkgs {
		for _, f := range p.Syntax {
			test := strings.HasSuffix(p.Fset.Position(f.Pos()).Filename, "_test.go")
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.SwitchStmt:
					checkSwitch(ms, p, n, problem)
				case *ast.BinaryExpr:
					if test || (n.Op != token.EQL && n.Op != token.NEQ) {
						break
					}
					for _, x := range []ast.Expr{n.X, n.Y} {
						if e := ms.enumOf(p.TypesInfo.TypeOf(x)); e != nil {
							problem(p.Fset, n.Pos(), "%s compared with %s: switch over every variant instead", e.name, n.Op)
							break
						}
					}
				case *ast.CallExpr:
					if test || p.PkgPath == patchPkg {
						break
					}
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						break
					}
					fn, ok := p.TypesInfo.Uses[sel.Sel].(*types.Func)
					if !ok || fn.Pkg() == nil || fn.Pkg().Path() != patchPkg {
						break
					}
					recv := fn.Signature().Recv()
					if recv == nil || !strings.HasSuffix(recv.Type().String(), "patch.Set") {
						break
					}
					switch {
					case fn.Name() == "Is":
						problem(p.Fset, n.Pos(), "patch.Set.Is compares variant names: read the patch's Selector and switch over its enum")
					case fn.Name() == "Get" && binders[p.PkgPath]:
						problem(p.Fset, n.Pos(), "patch.Set.Get in a package that binds a patch: read the patch's Selector (typed) instead")
					}
				}
				return true
			})
		}
	}
	sort.Strings(ms.problems)
	return ms, nil
}

// calledFunc returns the package-level function call calls (through an
// explicit instantiation too), or nil.
func calledFunc(info *types.Info, call *ast.CallExpr) *types.Func {
	fun := ast.Unparen(call.Fun)
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	if ix, ok := fun.(*ast.IndexListExpr); ok {
		fun = ix.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil
	}
	fn, ok := info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil || fn.Signature().Recv() != nil {
		return nil
	}
	return fn
}

// qualified names an object as package path + "." + name.
func qualified(o types.Object) string { return o.Pkg().Path() + "." + o.Name() }

// enumOf returns the enum whose type t is, or nil.
func (ms *moduleSource) enumOf(t types.Type) *enumInfo {
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return nil
	}
	return ms.enums[qualified(named.Obj())]
}

// recordBind records patch.Bind[V](P): V's constants and the patch P.
func recordBind(ms *moduleSource, p *packages.Package, call *ast.CallExpr, problem func(*token.FileSet, token.Pos, string, ...any)) {
	fun := ast.Unparen(call.Fun)
	ix, ok := fun.(*ast.IndexExpr)
	if !ok {
		problem(p.Fset, call.Pos(), "patch.Bind without an explicit enum type argument")
		return
	}
	named, ok := types.Unalias(p.TypesInfo.TypeOf(ix.Index)).(*types.Named)
	if !ok || len(call.Args) != 1 {
		problem(p.Fset, call.Pos(), "patch.Bind of a type that is not a named enum type")
		return
	}
	var pv types.Object
	switch a := ast.Unparen(call.Args[0]).(type) {
	case *ast.Ident:
		pv = p.TypesInfo.Uses[a]
	case *ast.SelectorExpr:
		pv = p.TypesInfo.Uses[a.Sel]
	}
	if pv == nil || pv.Pkg() == nil {
		problem(p.Fset, call.Pos(), "patch.Bind of something other than a patch variable")
		return
	}
	name := qualified(named.Obj())
	e := &enumInfo{name: name, consts: map[int64]string{}, patch: qualified(pv), pos: p.Fset.Position(call.Pos()).String()}
	scope := named.Obj().Pkg().Scope()
	for _, n := range scope.Names() {
		c, ok := scope.Lookup(n).(*types.Const)
		if !ok || !types.Identical(c.Type(), named) {
			continue
		}
		v, exact := constant.Int64Val(c.Val())
		if !exact {
			continue
		}
		if prev, dup := e.consts[v]; dup {
			e.dup = append(e.dup, prev+"="+n)
		}
		e.consts[v] = n
	}
	if old, ok := ms.enums[name]; ok && old.patch != e.patch {
		problem(p.Fset, call.Pos(), "%s bound to %s and %s", name, old.patch, e.patch)
	}
	ms.enums[name] = e
}

// recordRegister records v = patch.Register(&patch.Patch{ID: ..., Variants: ...}).
// A test may register a patch inside a function (to see Register panic);
// such a patch is not checked.
func recordRegister(ms *moduleSource, p *packages.Package, f *ast.File, call *ast.CallExpr, test bool, problem func(*token.FileSet, token.Pos, string, ...any)) {
	r := &registration{variants: -1, pos: p.Fset.Position(call.Pos()).String()}
	if len(call.Args) == 1 {
		if u, ok := call.Args[0].(*ast.UnaryExpr); ok && u.Op == token.AND {
			if lit, ok := u.X.(*ast.CompositeLit); ok {
				for _, el := range lit.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					key, _ := kv.Key.(*ast.Ident)
					switch {
					case key == nil:
					case key.Name == "ID":
						if bl, ok := kv.Value.(*ast.BasicLit); ok {
							r.id, _ = strconv.Unquote(bl.Value)
						}
					case key.Name == "Variants":
						if vl, ok := kv.Value.(*ast.CompositeLit); ok {
							r.variants = len(vl.Elts)
						}
					}
				}
			}
		}
	}
	// The variable the call's result is assigned to.
	path, _ := pathEnclosing(f, call)
	for _, n := range path {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, v := range vs.Values {
				if v == call && i < len(vs.Names) {
					if o := p.TypesInfo.Defs[vs.Names[i]]; o != nil {
						r.variable = qualified(o)
					}
				}
			}
		}
	}
	switch {
	case r.variable == "" && test:
	case r.variable == "":
		problem(p.Fset, call.Pos(), "patch.Register whose result is not a package-level variable")
	case r.variants < 0:
		problem(p.Fset, call.Pos(), "patch.Register of %s without a Variants literal", r.variable)
	default:
		ms.regs[r.variable] = r
	}
}

// pathEnclosing returns the nodes from f down to n.
func pathEnclosing(f *ast.File, n ast.Node) ([]ast.Node, bool) {
	var stack, found []ast.Node
	ast.Inspect(f, func(x ast.Node) bool {
		if found != nil {
			return false
		}
		if x == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, x)
		if x == n {
			found = append([]ast.Node(nil), stack...)
			return false
		}
		return true
	})
	return found, found != nil
}

// checkSwitch reports a switch over a variant enum that does not list every
// constant (whatever its default clause does).
func checkSwitch(ms *moduleSource, p *packages.Package, sw *ast.SwitchStmt, problem func(*token.FileSet, token.Pos, string, ...any)) {
	if sw.Tag == nil {
		return
	}
	e := ms.enumOf(p.TypesInfo.TypeOf(sw.Tag))
	if e == nil {
		return
	}
	covered := map[int64]bool{}
	hasDefault := false
	for _, s := range sw.Body.List {
		cc := s.(*ast.CaseClause)
		if cc.List == nil {
			hasDefault = true
		}
		for _, x := range cc.List {
			tv := p.TypesInfo.Types[x]
			if tv.Value == nil {
				problem(p.Fset, x.Pos(), "case of a switch over %s is not a constant", e.name)
				continue
			}
			v, _ := constant.Int64Val(tv.Value)
			covered[v] = true
		}
	}
	var missing []string
	for v, n := range e.consts {
		if !covered[v] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		how := "misses"
		if hasDefault {
			how = "hides in its default clause"
		}
		problem(p.Fset, sw.Pos(), "switch over %s %s %s", e.name, how, strings.Join(missing, ", "))
	}
}

// TestVariantSwitchesExhaustive checks, over the module's source (the
// packages' own files; of the test files, only the patch package's): every
// switch over a patch's variant enum lists every constant (a default clause
// may only catch values no constant names); no code outside tests compares
// a variant with == or != or reads one by name (Set.Is) or untyped
// (Set.Get in a package with a patch); every patch.Register has one enum
// bound to it with as many constants, valued 0..n-1, as the literal has
// Variants.
func TestVariantSwitchesExhaustive(t *testing.T) {
	ms := loadModule(t)
	for _, pr := range ms.problems {
		t.Error(pr)
	}
	byPatch := map[string]*enumInfo{}
	for _, e := range ms.enums {
		if old := byPatch[e.patch]; old != nil {
			t.Errorf("%s: %s has two enums, %s and %s", e.pos, e.patch, old.name, e.name)
		}
		byPatch[e.patch] = e
		if len(e.dup) > 0 {
			t.Errorf("%s: %s has constants of the same value: %v", e.pos, e.name, e.dup)
		}
		if _, ok := ms.regs[e.patch]; !ok {
			t.Errorf("%s: %s bound to %s, which is not a patch.Register result", e.pos, e.name, e.patch)
		}
	}
	for v, r := range ms.regs {
		e := byPatch[v]
		if e == nil {
			t.Errorf("%s: patch %s (%s) has no variant enum: declare one and patch.Bind it", r.pos, r.id, v)
			continue
		}
		if len(e.consts) != r.variants {
			t.Errorf("%s: %s has %d constants, patch %s %d variants", e.pos, e.name, len(e.consts), r.id, r.variants)
		}
		for i := 0; i < r.variants; i++ {
			if _, ok := e.consts[int64(i)]; !ok {
				t.Errorf("%s: %s has no constant of value %d (variant %d of %s)", e.pos, e.name, i, i, r.id)
			}
		}
	}
	t.Logf("%d patches, %d variant enums checked", len(ms.regs), len(ms.enums))
}

// TestRegisteredPatchesBound checks the registry at run time: every patch
// registered in this binary (all of the module's, through sim) is bound to
// an enum found in the source with one constant per variant.
func TestRegisteredPatchesBound(t *testing.T) {
	ms := loadModule(t)
	for _, p := range patch.All() {
		name := p.Enum()
		if name == "" {
			t.Errorf("patch %s has no variant enum (patch.Bind)", p.ID)
			continue
		}
		e := ms.enums[name]
		if e == nil {
			t.Errorf("patch %s: enum %s not found in the source", p.ID, name)
			continue
		}
		if len(e.consts) != len(p.Variants) {
			t.Errorf("patch %s: %s has %d constants for %d variants", p.ID, name, len(e.consts), len(p.Variants))
		}
	}
}
