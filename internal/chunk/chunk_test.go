package chunk

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// check splits src and verifies the invariants every result must hold:
// chunks in order, each its own content, within the caps, together
// covering every byte; overlaps only between windows of one definition or
// run, at most o.Overlap lines; valid UTF-8 in, valid UTF-8 out; symbols
// naming their own token.
func check(t testing.TB, path, lang string, src []byte, o Options) ([]Chunk, []Symbol) {
	t.Helper()
	chunks, syms := Split(path, lang, src, o)
	if len(src) == 0 {
		if len(chunks) != 0 || len(syms) != 0 {
			t.Fatalf("%s: empty file gave %d chunks, %d symbols", path, len(chunks), len(syms))
		}
		return chunks, syms
	}
	n := o.normalized()
	s := newSplitter(src, n)
	covered := 0 // every byte before this is in some chunk
	valid := utf8.Valid(src)
	for i, c := range chunks {
		where := fmt.Sprintf("%s: chunk %d (%d-%d %s %q)", path, i, c.StartLine, c.EndLine, c.Kind, c.Symbol)
		if c.StartOffset < 0 || c.EndOffset > len(src) || c.StartOffset >= c.EndOffset {
			t.Fatalf("%s: bad range [%d,%d)", where, c.StartOffset, c.EndOffset)
		}
		if c.Content != string(src[c.StartOffset:c.EndOffset]) {
			t.Fatalf("%s: content is not src[start:end]", where)
		}
		if c.StartLine != s.lineOf(c.StartOffset)+1 || c.EndLine != s.lastLine(c.StartOffset, c.EndOffset)+1 {
			t.Fatalf("%s: lines do not match offsets [%d,%d)", where, c.StartOffset, c.EndOffset)
		}
		if c.EndLine-c.StartLine+1 > n.MaxLines || c.EndOffset-c.StartOffset > n.MaxBytes {
			t.Fatalf("%s: %d lines, %d bytes over the caps %d, %d", where,
				c.EndLine-c.StartLine+1, c.EndOffset-c.StartOffset, n.MaxLines, n.MaxBytes)
		}
		switch c.Kind {
		case KindFunction, KindMethod, KindClass, KindType, KindInterface, KindModule, KindWindow:
		default:
			t.Fatalf("%s: unknown kind", where)
		}
		if c.StartOffset > covered {
			t.Fatalf("%s: bytes [%d,%d) are in no chunk", where, covered, c.StartOffset)
		}
		if c.StartOffset < covered {
			p := chunks[i-1]
			if p.Kind != c.Kind || p.Symbol != c.Symbol {
				t.Fatalf("%s: overlaps chunk %d of another kind or symbol", where, i-1)
			}
			if shared := p.EndLine - c.StartLine + 1; shared > n.Overlap {
				t.Fatalf("%s: shares %d lines with the previous window, more than %d", where, shared, n.Overlap)
			}
			if c.StartOffset <= p.StartOffset || c.EndOffset <= p.EndOffset {
				t.Fatalf("%s: does not move past chunk %d", where, i-1)
			}
		}
		covered = max(covered, c.EndOffset)
		if valid && !utf8.ValidString(c.Content) {
			t.Fatalf("%s: splits a UTF-8 sequence", where)
		}
	}
	if covered != len(src) {
		t.Fatalf("%s: bytes [%d,%d) are in no chunk", path, covered, len(src))
	}
	for i, y := range syms {
		if i > 0 && y.StartOffset < syms[i-1].EndOffset {
			t.Fatalf("%s: symbol %+v overlaps or precedes %+v", path, y, syms[i-1])
		}
		tok := string(src[y.StartOffset:y.EndOffset])
		if tok == "" || y.Name != qualify(y.Parent, tok) {
			t.Fatalf("%s: symbol %+v: token %q does not make its name", path, y, tok)
		}
		if y.Line != s.lineOf(y.StartOffset)+1 {
			t.Fatalf("%s: symbol %+v: wrong line", path, y)
		}
	}
	return chunks, syms
}

// shape is the part of a chunk the expectations spell out.
type shape struct {
	start, end int
	kind, sym  string
}

func shapes(cs []Chunk) []shape {
	out := make([]shape, len(cs))
	for i, c := range cs {
		out[i] = shape{c.StartLine, c.EndLine, c.Kind, c.Symbol}
	}
	return out
}

func symNames(ss []Symbol) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Kind + " " + s.Name
	}
	return out
}

func expectShapes(t *testing.T, cs []Chunk, want []shape) {
	t.Helper()
	if got := shapes(cs); !reflect.DeepEqual(got, want) {
		t.Errorf("chunks:\n got %v\nwant %v", got, want)
	}
}

func expectSyms(t *testing.T, ss []Symbol, want []string) {
	t.Helper()
	if got := symNames(ss); !reflect.DeepEqual(got, want) {
		t.Errorf("symbols:\n got %q\nwant %q", got, want)
	}
}

// chunkWith returns the chunk holding symbol sym (the first).
func chunkWith(t *testing.T, cs []Chunk, sym string) Chunk {
	t.Helper()
	for _, c := range cs {
		if c.Symbol == sym {
			return c
		}
	}
	t.Fatalf("no chunk for %q", sym)
	return Chunk{}
}

func TestGo(t *testing.T) {
	cs, ss := check(t, "demo.go", "go", []byte(goSample), Options{})
	expectShapes(t, cs, []shape{
		{1, 15, "module", ""}, // package doc, imports, const and var
		{16, 21, "type", "Server"},
		{22, 26, "interface", "Handler"},
		{27, 32, "method", "Server.ServeHTTP"},
		{33, 35, "function", "parse"},
	})
	expectSyms(t, ss, []string{
		"const MaxSize", "var registry", "type Server", "field Server.Addr", "field Server.n",
		"interface Handler", "method Handler.Handle", "method Server.ServeHTTP", "function parse",
	})
	if c := chunkWith(t, cs, "Server.ServeHTTP"); !strings.HasPrefix(c.Content, "// ServeHTTP serves a request.\n// It is long.\nfunc (s *Server)") {
		t.Errorf("doc comment not attached: %q", c.Content)
	}
	for _, y := range ss {
		if y.Name == "Server.ServeHTTP" && (y.Parent != "Server" || y.Line != 29) {
			t.Errorf("ServeHTTP symbol: %+v", y)
		}
	}
}

func TestGoReceiversAndGroups(t *testing.T) {
	src := `package p

type (
	// A is first.
	A[T any] struct {
		X, Y int
	}

	// B is second.
	B interface{ M() }
)

const (
	C1 = iota
	_
	C2
)

func (a *A[T]) Get() T { var z T; return z }
func (A[T]) Len() int  { return 0 }
func (b B) Other()      {}
`
	cs, ss := check(t, "g.go", "go", []byte(src), Options{})
	expectSyms(t, ss, []string{
		"type A", "field A.X", "field A.Y", "interface B", "method B.M",
		"const C1", "const C2", "method A.Get", "method A.Len", "method B.Other",
	})
	expectShapes(t, cs, []shape{
		{1, 2, "module", ""},
		{3, 12, "type", "A"}, // the whole group fits
		{13, 18, "module", ""},
		{19, 19, "method", "A.Get"},
		{20, 20, "method", "A.Len"},
		{21, 21, "method", "B.Other"},
	})
	// Too long for one chunk, the group splits into its specs, and its
	// "type (" and ")" lines join them.
	cs, _ = check(t, "g.go", "go", []byte(src), Options{MaxLines: 6})
	expectShapes(t, cs[:3], []shape{
		{1, 2, "module", ""},
		{3, 8, "type", "A"},
		{9, 12, "interface", "B"},
	})
}

func TestPython(t *testing.T) {
	cs, ss := check(t, "demo.py", "python", []byte(pySample), Options{})
	expectShapes(t, cs, []shape{
		{1, 6, "module", ""},
		{7, 11, "function", "parse_args"},
		{12, 26, "class", "Config"}, // small enough to stay whole
		{27, 28, "module", ""},
	})
	expectSyms(t, ss, []string{
		"var DEFAULT", "function parse_args", "class Config", "field Config.name",
		"method Config.__init__", "method Config.load",
	})
	if c := chunkWith(t, cs, "parse_args"); !strings.HasPrefix(c.Content, "# Parse the arguments.\ndef parse_args") {
		t.Errorf("comment not attached: %q", c.Content)
	}

	// A class longer than MaxLines: a header chunk with the docstring and
	// fields, then one chunk per method with its comment and decorator.
	cs, _ = check(t, "demo.py", "python", []byte(pySample), Options{MaxLines: 8})
	expectShapes(t, cs, []shape{
		{1, 6, "module", ""},
		{7, 11, "function", "parse_args"},
		{12, 16, "class", "Config"},
		{17, 19, "method", "Config.__init__"},
		{20, 26, "method", "Config.load"},
		{27, 28, "module", ""},
	})
	if c := chunkWith(t, cs, "Config.load"); !strings.HasPrefix(c.Content, "    # Load reads the file.\n    @property\n    def load") {
		t.Errorf("comment and decorator not attached: %q", c.Content)
	}
	if c := chunkWith(t, cs, "Config"); strings.Contains(c.Content, "def ") {
		t.Errorf("class header chunk holds methods: %q", c.Content)
	}
}

func TestJavaScript(t *testing.T) {
	for _, s := range []sample{{"demo.js", "javascript", jsSample}, {"demo.jsx", "jsx", jsSample}, {"demo.jsx", "", jsSample}} {
		cs, ss := check(t, s.path, s.lang, []byte(s.src), Options{})
		expectShapes(t, cs, []shape{
			{1, 2, "module", ""},
			{3, 9, "function", "add"},
			{10, 11, "function", "Button"},
			{12, 20, "class", "Store"},
			{21, 24, "function", "Store.size"},
			{25, 25, "module", ""},
		})
		expectSyms(t, ss, []string{
			"function add", "function Button", "class Store", "field Store.items",
			"method Store.add", "function Store.size",
		})
		if c := chunkWith(t, cs, "add"); !strings.HasPrefix(c.Content, "/**\n * Adds numbers.\n */\nexport function add") {
			t.Errorf("JSDoc not attached: %q", c.Content)
		}
	}
	cs, _ := check(t, "demo.js", "javascript", []byte(jsSample), Options{MaxLines: 5})
	expectShapes(t, cs, []shape{
		{1, 2, "module", ""},
		{3, 7, "function", "add"}, // 7 lines: two windows sharing 2 lines
		{6, 8, "function", "add"},
		{9, 11, "function", "Button"},   // with the blank line above: "add" is full
		{12, 14, "class", "Store"},      // header and field
		{15, 19, "method", "Store.add"}, // comment, method and the class's "}"
		{20, 24, "function", "Store.size"},
		{25, 25, "module", ""},
	})
}

func TestTypeScript(t *testing.T) {
	cs, ss := check(t, "demo.ts", "typescript", []byte(tsSample), Options{})
	expectShapes(t, cs, []shape{
		{1, 2, "module", ""},
		{3, 8, "interface", "User"},
		{9, 10, "type", "ID"},
		{11, 12, "type", "Color"},
		{13, 24, "class", "Service"},
		{25, 27, "function", "helper"},
	})
	expectSyms(t, ss, []string{
		"interface User", "type ID", "type Color", "class Service", "field Service.cache",
		"method Service.constructor", "method Service.get", "function helper",
	})
	cs, _ = check(t, "demo.ts", "typescript", []byte(tsSample), Options{MaxLines: 8})
	expectShapes(t, cs[4:7], []shape{
		{13, 16, "class", "Service"},
		{17, 18, "method", "Service.constructor"},
		{19, 23, "method", "Service.get"},
	})
	if c := chunkWith(t, cs, "Service.get"); !strings.HasPrefix(c.Content, "  /** Get one. */\n  async get(") {
		t.Errorf("doc comment not attached: %q", c.Content)
	}

	// .tsx needs the TSX grammar: the TypeScript one reads "<span" as a cast.
	cs, ss = check(t, "demo.tsx", "typescript", []byte(tsxSample), Options{})
	expectShapes(t, cs, []shape{
		{1, 2, "module", ""},
		{3, 4, "interface", "Props"},
		{5, 8, "function", "Label"},
		{9, 9, "function", "Badge"},
	})
	expectSyms(t, ss, []string{"interface Props", "function Label", "function Badge"})
	_, ss2 := check(t, "demo.tsx", "tsx", []byte(tsxSample), Options{})
	if !reflect.DeepEqual(ss, ss2) {
		t.Errorf(`lang "tsx" and "typescript"+.tsx differ`)
	}
}

func TestJava(t *testing.T) {
	cs, ss := check(t, "Demo.java", "java", []byte(javaSample), Options{})
	expectShapes(t, cs, []shape{
		{1, 4, "module", ""},
		{5, 27, "class", "Demo"},
	})
	expectSyms(t, ss, []string{
		"class Demo", "field Demo.names", "method Demo.Demo", "method Demo.count",
		"interface Demo.Visitor", "method Demo.Visitor.visit", "type Demo.Mode",
		"const Demo.Mode.ON", "const Demo.Mode.OFF",
	})
	cs, _ = check(t, "Demo.java", "java", []byte(javaSample), Options{MaxLines: 8})
	expectShapes(t, cs, []shape{
		{1, 4, "module", ""},
		{5, 10, "class", "Demo"}, // Javadoc, header, field
		{11, 15, "method", "Demo.Demo"},
		{16, 21, "method", "Demo.count"},
		{22, 25, "interface", "Demo.Visitor"},
		{26, 27, "type", "Demo.Mode"},
	})
	if c := chunkWith(t, cs, "Demo.count"); !strings.HasPrefix(c.Content, "    // Counts names.\n    @Override\n    public int count()") {
		t.Errorf("comment not attached: %q", c.Content)
	}
	if c := chunkWith(t, cs, "Demo"); !strings.HasPrefix(c.Content, "/**\n * A demo class.\n */\npublic class Demo {") {
		t.Errorf("class Javadoc not attached: %q", c.Content)
	}
}

// longFunc returns a Go file whose function run spans lines 3..n+4.
func longFunc(n int) string {
	var b strings.Builder
	b.WriteString("package p\n\n// Long is long.\nfunc Long() {\n")
	for i := range n {
		fmt.Fprintf(&b, "\tx%d := %d\n\t_ = x%d\n", i, i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

func TestLongDefinitionWindows(t *testing.T) {
	src := longFunc(50) // func on lines 3..105
	o := Options{MaxLines: 30, Overlap: 5}
	cs, _ := check(t, "long.go", "go", []byte(src), o)
	expectShapes(t, cs, []shape{
		{1, 2, "module", ""},
		{3, 32, "function", "Long"},
		{28, 57, "function", "Long"},
		{53, 82, "function", "Long"},
		{78, 105, "function", "Long"},
	})
	if !strings.HasPrefix(cs[1].Content, "// Long is long.\nfunc Long() {") {
		t.Errorf("first window lost the doc comment: %q", cs[1].Content)
	}

	// The byte cap splits too, with a smaller overlap.
	cs, _ = check(t, "long.go", "go", []byte(src), Options{MaxBytes: 200, Overlap: 3})
	if len(cs) < 7 {
		t.Errorf("MaxBytes 200 gave only %d chunks", len(cs))
	}
	for _, c := range cs[1:] {
		if c.Symbol != "Long" || c.Kind != "function" {
			t.Errorf("window lost its symbol: %+v", c)
		}
	}
}

func TestNoGrammarWindows(t *testing.T) {
	if Supported("markdown") || Supported("c") || !Supported("Go") || !Supported("tsx") || !Supported("java") {
		t.Fatal("Supported is wrong")
	}
	cs, ss := check(t, "README.md", "markdown", []byte(mdSample), Options{})
	if len(ss) != 0 {
		t.Errorf("symbols for markdown: %v", ss)
	}
	expectShapes(t, cs, []shape{{1, 8, "window", ""}})

	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "int f%d(void) { return %d; }\n", i, i)
	}
	cs, _ = check(t, "a.c", "c", []byte(b.String()), Options{MaxLines: 40, Overlap: 10})
	expectShapes(t, cs, []shape{
		{1, 40, "window", ""},
		{31, 70, "window", ""},
		{61, 100, "window", ""},
	})
	cs, _ = check(t, "a.c", "c", []byte(b.String()), Options{MaxLines: 40, Overlap: -1})
	expectShapes(t, cs, []shape{
		{1, 40, "window", ""},
		{41, 80, "window", ""},
		{81, 100, "window", ""},
	})
}

func TestEdgeCases(t *testing.T) {
	for _, s := range samples {
		check(t, s.path, s.lang, nil, Options{})
		check(t, s.path, s.lang, []byte{}, Options{})
		check(t, s.path, s.lang, []byte("\n"), Options{})
		check(t, s.path, s.lang, []byte("\n\n\n"), Options{})
		check(t, s.path, s.lang, []byte("x"), Options{})
		// No final newline.
		check(t, s.path, s.lang, []byte(strings.TrimSuffix(s.src, "\n")), Options{})
		// CRLF.
		check(t, s.path, s.lang, []byte(strings.ReplaceAll(s.src, "\n", "\r\n")), Options{})
		// Invalid UTF-8 and NUL bytes.
		bad := []byte(s.src)
		bad = append(bad[:len(bad)/2:len(bad)/2], append([]byte{0xff, 0xfe, 0, '\n', 0xc3}, bad[len(bad)/2:]...)...)
		check(t, s.path, s.lang, bad, Options{})
		// Garbage the grammar cannot parse.
		check(t, s.path, s.lang, []byte("}}} ((( def class func ]]]\n\t{{{\n"+s.src[:len(s.src)/3]), Options{})
		// Tiny caps.
		for _, o := range []Options{{MaxLines: 1, Overlap: 1}, {MaxLines: 2}, {MaxBytes: 16}, {MaxLines: 3, MaxBytes: 40}} {
			check(t, s.path, s.lang, []byte(s.src), o)
		}
	}
	cs, _ := check(t, "e.go", "go", []byte("\n\n\n"), Options{})
	expectShapes(t, cs, []shape{{1, 3, "module", ""}})
	cs, _ = check(t, "e.md", "markdown", []byte("x"), Options{})
	expectShapes(t, cs, []shape{{1, 1, "window", ""}})
}

func TestLongLines(t *testing.T) {
	// A minified line: several pieces, none over the cap, none cutting a
	// multi-byte character, covering the line.
	line := strings.Repeat("var é=\"ü€𝄞\";", 1000)
	for _, lang := range []string{"javascript", "markdown"} {
		src := []byte("// head\n" + line + "\n// tail\n")
		cs, _ := check(t, "min.js", lang, src, Options{MaxBytes: 1000})
		if len(cs) < 15 {
			t.Errorf("%s: %d chunks for a %d-byte line", lang, len(cs), len(line))
		}
	}
	// Invalid UTF-8 is cut anywhere rather than never.
	src := bytes.Repeat([]byte{0x80}, 5000)
	cs, _ := check(t, "bin.txt", "text", src, Options{MaxBytes: 100})
	if len(cs) != 50 {
		t.Errorf("%d chunks for 5000 continuation bytes", len(cs))
	}
}

func TestDeterministic(t *testing.T) {
	for _, s := range samples {
		for _, o := range []Options{{}, {MaxLines: 5, Overlap: 2}} {
			c1, s1 := Split(s.path, s.lang, []byte(s.src), o)
			c2, s2 := Split(s.path, s.lang, []byte(s.src), o)
			if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(s1, s2) {
				t.Errorf("%s: two splits differ", s.path)
			}
		}
	}
}

func TestConcurrent(t *testing.T) {
	type result struct {
		cs []Chunk
		ss []Symbol
	}
	inputs := append([]sample{}, samples...)
	inputs = append(inputs, sample{"long.go", "go", longFunc(200)})
	want := make([]result, len(inputs))
	for i, s := range inputs {
		want[i].cs, want[i].ss = Split(s.path, s.lang, []byte(s.src), Options{MaxLines: 20})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range 40 {
				i := (g + it) % len(inputs)
				s := inputs[i]
				cs, ss := Split(s.path, s.lang, []byte(s.src), Options{MaxLines: 20})
				if !reflect.DeepEqual(cs, want[i].cs) || !reflect.DeepEqual(ss, want[i].ss) {
					errs <- s.path
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for p := range errs {
		t.Errorf("%s: concurrent split differs from the sequential one", p)
	}
}
