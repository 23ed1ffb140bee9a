package mutation

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
)

// Mutant is one change to one file: the bytes [Offset, Offset+Len) of
// File replaced by With.
type Mutant struct {
	// File is the file's path as given to Find.
	File string
	// Line and Col are where the change is (1-based).
	Line, Col int
	// Offset and Len are the bytes replaced, With what replaces them.
	Offset, Len int
	With        string
	// Func is the function the change is in ("" at package level), and
	// FuncLine to FuncEnd its lines (0 at package level).
	Func              string
	FuncLine, FuncEnd int
	// Was and Now are the expression before and after the change, as
	// source text: with File and Func, the mutant's Key.
	Was, Now string
}

// Key names the mutant in the list of equivalents: the file, the
// function and the expression before and after, so it survives edits
// elsewhere in the file. Two identical changes in one function share it.
func (m Mutant) Key() string {
	return fmt.Sprintf("%s %s: %s => %s", m.File, m.Func, m.Was, m.Now)
}

func (m Mutant) String() string {
	return fmt.Sprintf("%s:%d:%d %s: %s => %s", m.File, m.Line, m.Col, m.Func, m.Was, m.Now)
}

// swaps are the binary operators each one is mutated to.
var swaps = map[token.Token][]token.Token{
	token.LSS:  {token.LEQ, token.GEQ},
	token.LEQ:  {token.LSS, token.GTR},
	token.GTR:  {token.GEQ, token.LEQ},
	token.GEQ:  {token.GTR, token.LSS},
	token.EQL:  {token.NEQ},
	token.NEQ:  {token.EQL},
	token.LAND: {token.LOR},
	token.LOR:  {token.LAND},
	token.ADD:  {token.SUB},
	token.SUB:  {token.ADD},
	token.MUL:  {token.QUO},
	token.QUO:  {token.MUL},
}

// Find returns the mutants of the Go file at path, in source order.
func Find(path string) ([]Mutant, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []Mutant
	for _, decl := range f.Decls {
		fn, from, to := "", 0, 0
		if d, ok := decl.(*ast.FuncDecl); ok {
			fn, from, to = funcName(d), fset.Position(d.Pos()).Line, fset.Position(d.End()).Line
		}
		ast.Inspect(decl, func(n ast.Node) bool {
			for _, m := range mutantsOf(fset, src, path, fn, n) {
				m.FuncLine, m.FuncEnd = from, to
				out = append(out, m)
			}
			return true
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	return out, nil
}

// mutantsOf are the mutants of node n of function fn.
func mutantsOf(fset *token.FileSet, src []byte, path, fn string, n ast.Node) []Mutant {
	text := func(e ast.Node) string {
		return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
	}
	mk := func(e ast.Expr, at token.Pos, n int, with string) Mutant {
		p := fset.Position(at)
		start := fset.Position(e.Pos()).Offset
		was := text(e)
		now := was[:p.Offset-start] + with + was[p.Offset-start+n:]
		return Mutant{File: path, Line: p.Line, Col: p.Column, Offset: p.Offset, Len: n, With: with, Func: fn, Was: was, Now: now}
	}
	switch e := n.(type) {
	case *ast.BinaryExpr:
		if e.Op == token.ADD && (stringLit(e.X) || stringLit(e.Y)) {
			return nil
		}
		var out []Mutant
		for _, to := range swaps[e.Op] {
			out = append(out, mk(e, e.OpPos, len(e.Op.String()), to.String()))
		}
		return out
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return []Mutant{mk(e, e.OpPos, 1, "")}
		}
	}
	return nil
}

func stringLit(e ast.Expr) bool {
	b, ok := e.(*ast.BasicLit)
	return ok && b.Kind == token.STRING
}

// funcName is d's name, with its receiver's type for a method.
func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + d.Name.Name
	}
	return d.Name.Name
}

// Apply returns src with m made.
func Apply(src []byte, m Mutant) []byte {
	out := make([]byte, 0, len(src)+len(m.With))
	out = append(out, src[:m.Offset]...)
	out = append(out, m.With...)
	return append(out, src[m.Offset+m.Len:]...)
}
