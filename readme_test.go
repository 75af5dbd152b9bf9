package kafka_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Go code block of README.md is a whole program under examples/
// (compiled by go vet and go build, and run against a cluster by
// `make example`, which CI runs) or the body of an Example function
// (compiled with the tests), character for character: the README cannot
// show code that does not build or that differs from what runs.
func TestReadmeGoBlocks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{} // code -> where it comes from
	programs, _ := filepath.Glob("examples/*/main.go")
	for _, p := range programs {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		known[strings.TrimSpace(string(src))] = p
	}
	files, _ := filepath.Glob("example_*_test.go")
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			body := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			known[dedent(body)] = p + ": " + fn.Name.Name
		}
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("no Go code block in README.md")
	}
	for i, b := range blocks {
		code := strings.TrimSpace(b[1])
		if _, ok := known[code]; !ok {
			t.Errorf("README.md Go block %d is neither a program under examples/ nor the body of an Example function:\n%s", i+1, code)
		}
	}
}

// dedent removes one tab from every line of a function body and trims it.
func dedent(body string) string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
