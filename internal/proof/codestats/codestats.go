package codestats

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fzipp/gocyclo"
)

// Func is one function or method: where it is, its cyclomatic complexity
// (gocyclo.Complexity) and its length in lines, from "func" to the
// closing brace.
type Func struct {
	Name       string
	Pos        string // file:line, relative to the module root
	Complexity int
	Lines      int
}

// skipDirs are directories never measured.
var skipDirs = map[string]bool{"node_modules": true, "testdata": true, ".git": true, "bin": true, "build": true, "cdk.out": true}

// Measure returns every function of the non-test Go files under root,
// sorted by position. A file that does not parse is an error naming it.
func Measure(root string) ([]Func, error) {
	var out []Func
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("codestats: %w", err)
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			out = append(out, Func{
				Name:       funcName(f.Name.Name, fn),
				Pos:        fmt.Sprintf("%s:%d", rel, start.Line),
				Complexity: gocyclo.Complexity(fn),
				Lines:      end.Line - start.Line + 1,
			})
		}
		return nil
	})
	return out, err
}

// funcName is pkg.Func or pkg.(Recv).Method, as gocyclo names them.
func funcName(pkg string, fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return pkg + "." + fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	if idx, ok := t.(*ast.IndexExpr); ok {
		t = idx.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	return pkg + ".(" + star + name + ")." + fn.Name.Name
}

// Report is the figures of a measurement against the bounds.
type Report struct {
	Funcs         int
	MaxComplexity int
	MaxLines      int
	// Complex are the functions above MaxComplexity; Long those over
	// MaxLines.
	Complex []Func
	Long    []Func
}

// Summarize compares funcs with the bounds.
func Summarize(funcs []Func, maxComplexity, maxLines int) Report {
	r := Report{Funcs: len(funcs), MaxComplexity: maxComplexity, MaxLines: maxLines}
	for _, f := range funcs {
		if f.Complexity > maxComplexity {
			r.Complex = append(r.Complex, f)
		}
		if f.Lines > maxLines {
			r.Long = append(r.Long, f)
		}
	}
	slices.SortStableFunc(r.Complex, func(a, b Func) int { return b.Complexity - a.Complexity })
	slices.SortStableFunc(r.Long, func(a, b Func) int { return b.Lines - a.Lines })
	return r
}

// Percent is the share of functions above MaxComplexity, in percent.
func (r Report) Percent() float64 {
	if r.Funcs == 0 {
		return 0
	}
	return 100 * float64(len(r.Complex)) / float64(r.Funcs)
}

// WriteSummary prints the figures on one line.
func (r Report) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintf(w, "codestats: %d functions; complexity > %d: %d (%.1f%%); over %d lines: %d\n",
		r.Funcs, r.MaxComplexity, len(r.Complex), r.Percent(), r.MaxLines, len(r.Long))
	return err
}

// Check returns an error when the figures break the project's rules: a
// function over MaxLines, or more than maxPercent of the functions above
// MaxComplexity.
func (r Report) Check(maxPercent float64) error {
	var errs []error
	if len(r.Long) > 0 {
		errs = append(errs, fmt.Errorf("codestats: %d functions over %d lines", len(r.Long), r.MaxLines))
	}
	if r.Percent() > maxPercent {
		errs = append(errs, fmt.Errorf("codestats: %.1f%% of the functions above complexity %d, more than %.1f%%", r.Percent(), r.MaxComplexity, maxPercent))
	}
	return errors.Join(errs...)
}

// Write prints the figures, then each function above a bound.
func (r Report) Write(w io.Writer) error {
	if err := r.WriteSummary(w); err != nil {
		return err
	}
	for _, f := range r.Complex {
		if _, err := fmt.Fprintf(w, "  complexity %3d  %s  %s\n", f.Complexity, f.Name, f.Pos); err != nil {
			return err
		}
	}
	for _, f := range r.Long {
		if _, err := fmt.Fprintf(w, "  %3d lines       %s  %s\n", f.Lines, f.Name, f.Pos); err != nil {
			return err
		}
	}
	return nil
}
