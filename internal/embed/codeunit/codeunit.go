// Package codeunit cuts source files into code units — a function, method
// or type together with its documentation — for training and evaluating the
// builtin embedder. Go is parsed exactly with go/parser; Python and
// JavaScript/TypeScript use light line- and brace-based heuristics that are
// good enough for statistics over millions of lines.
package codeunit

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unit is one code unit.
type Unit struct {
	Lang string // "go", "python", "javascript"
	Kind string // "func", "type", "class", "chunk", ...
	Name string // identifier of the function or type, if known
	Doc  string // documentation text without comment markers ("" if none)
	Code string // source text of the unit without its doc comment
	Line int    // 1-based line of the unit's first code line
}

// Lang returns the language Extract uses for path, or "".
func Lang(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".go":
		return "go"
	case ".py":
		return "python"
	case ".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx":
		return "javascript"
	}
	return ""
}

// Extract returns the units of a source file, choosing the extractor by the
// file's extension. Files that look generated or minified give no units.
func Extract(path string, src []byte) []Unit {
	switch Lang(path) {
	case "go":
		u, _ := Go(path, src)
		return u
	case "python":
		return Python(src)
	case "javascript":
		if Minified(src) {
			return nil
		}
		return JS(src)
	}
	return nil
}

// Minified reports whether src looks minified or bundled (very long lines).
func Minified(src []byte) bool {
	long := 0
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			i = len(src)
		}
		if i > 1000 {
			long++
			if long > 2 {
				return true
			}
		}
		if i == len(src) {
			break
		}
		src = src[i+1:]
	}
	return false
}

// Go parses a Go file and returns one unit per top-level function, method
// and documented type/const/var declaration. Generated files (with a
// "Code generated ... DO NOT EDIT." header) return no units.
func Go(path string, src []byte) ([]Unit, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if ast.IsGenerated(f) {
		return nil, nil
	}
	tf := fset.File(f.Pos())
	text := func(from, to token.Pos) string {
		a, b := tf.Offset(from), tf.Offset(to)
		if a < 0 || b > len(src) || a > b {
			return ""
		}
		return string(src[a:b])
	}
	var units []Unit
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			u := Unit{Lang: "go", Kind: "func", Name: d.Name.Name, Code: text(d.Pos(), d.End()), Line: tf.Line(d.Pos())}
			if d.Recv != nil {
				u.Kind = "method"
			}
			if d.Doc != nil {
				u.Doc = d.Doc.Text()
			}
			units = append(units, u)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			u := Unit{Lang: "go", Kind: d.Tok.String(), Code: text(d.Pos(), d.End()), Line: tf.Line(d.Pos())}
			if d.Doc != nil {
				u.Doc = d.Doc.Text()
			}
			if len(d.Specs) > 0 {
				switch s := d.Specs[0].(type) {
				case *ast.TypeSpec:
					u.Name = s.Name.Name
					if u.Doc == "" && s.Doc != nil {
						u.Doc = s.Doc.Text()
					}
				case *ast.ValueSpec:
					if len(s.Names) > 0 {
						u.Name = s.Names[0].Name
					}
				}
			}
			units = append(units, u)
		}
	}
	return units, nil
}

// FirstSentence returns the first sentence of a doc comment: text up to the
// first period, question or exclamation mark followed by white space (or
// the end), or up to the first blank line, with white space collapsed.
func FirstSentence(doc string) string {
	doc = strings.TrimSpace(doc)
	if i := strings.Index(doc, "\n\n"); i >= 0 {
		doc = doc[:i]
	}
	end := len(doc)
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		if i+1 == len(doc) || doc[i+1] == ' ' || doc[i+1] == '\n' || doc[i+1] == '\t' {
			// Skip "e.g. ", "i.e. " and the like.
			if c == '.' && i >= 2 && doc[i-2] == '.' {
				continue
			}
			end = i + 1
			break
		}
	}
	return strings.Join(strings.Fields(doc[:end]), " ")
}

// Python returns one unit per def and class of a Python file, found by
// indentation. A unit's Doc is its docstring; its Code is the def or class
// block without the docstring. A class unit holds the class header and the
// lines before its first method.
func Python(src []byte) []Unit {
	lines := strings.Split(string(src), "\n")
	var units []Unit
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimLeft(line, " \t")
		indent := len(line) - len(trim)
		kind := ""
		rest := ""
		switch {
		case strings.HasPrefix(trim, "def "):
			kind, rest = "func", trim[4:]
		case strings.HasPrefix(trim, "async def "):
			kind, rest = "func", trim[10:]
		case strings.HasPrefix(trim, "class "):
			kind, rest = "class", trim[6:]
		default:
			continue
		}
		name := identPrefix(rest)
		if name == "" {
			continue
		}
		// The signature may span several lines: it ends at the line where
		// brackets balance and which ends with ':'.
		j := i
		depth := 0
		for ; j < len(lines); j++ {
			depth += bracketDelta(lines[j])
			if depth <= 0 && strings.HasSuffix(strings.TrimRight(stripPyComment(lines[j]), " \t\r"), ":") {
				break
			}
			if j-i > 30 {
				break
			}
		}
		if j >= len(lines) {
			break
		}
		// Body: following lines indented deeper than the header (blank
		// lines included).
		end := j + 1
		for end < len(lines) {
			l := lines[end]
			t := strings.TrimLeft(l, " \t")
			if strings.TrimSpace(t) != "" && len(l)-len(t) <= indent {
				break
			}
			end++
		}
		for end > j+1 && strings.TrimSpace(lines[end-1]) == "" {
			end--
		}
		if end == j+1 {
			// One-line body on the header line ("def f(): pass").
			units = append(units, Unit{Lang: "python", Kind: kind, Name: name, Code: strings.Join(lines[i:j+1], "\n"), Line: i + 1})
			continue
		}
		body := lines[j+1 : end]
		doc, docEnd := pyDocstring(body)
		codeLines := append([]string{}, lines[i:j+1]...)
		rest2 := body[docEnd:]
		if kind == "class" {
			// Stop at the first nested def: methods are units of their own.
			for k, l := range rest2 {
				t := strings.TrimLeft(l, " \t")
				if strings.HasPrefix(t, "def ") || strings.HasPrefix(t, "async def ") || strings.HasPrefix(t, "@") {
					rest2 = rest2[:k]
					break
				}
			}
		}
		codeLines = append(codeLines, rest2...)
		units = append(units, Unit{Lang: "python", Kind: kind, Name: name, Doc: doc, Code: strings.Join(codeLines, "\n"), Line: i + 1})
	}
	return units
}

func identPrefix(s string) string {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return s[:i]
		}
	}
	return s
}

func stripPyComment(l string) string {
	if i := strings.IndexByte(l, '#'); i >= 0 && !strings.ContainsAny(l[:i], `"'`) {
		return l[:i]
	}
	return l
}

func bracketDelta(l string) int {
	d := 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '(', '[', '{':
			d++
		case ')', ']', '}':
			d--
		case '#':
			return d
		}
	}
	return d
}

// pyDocstring returns the docstring at the start of body (dedented, quotes
// removed) and the index of the first body line after it.
func pyDocstring(body []string) (string, int) {
	k := 0
	for k < len(body) && strings.TrimSpace(body[k]) == "" {
		k++
	}
	if k == len(body) {
		return "", 0
	}
	t := strings.TrimSpace(body[k])
	p := t
	if len(p) > 1 && strings.ContainsRune("rRuUbB", rune(p[0])) && (p[1] == '"' || p[1] == '\'') {
		p = p[1:]
	}
	var q string
	switch {
	case strings.HasPrefix(p, `"""`):
		q = `"""`
	case strings.HasPrefix(p, `'''`):
		q = `'''`
	case strings.HasPrefix(p, `"`) && len(p) > 1 && strings.HasSuffix(p, `"`):
		return p[1 : len(p)-1], k + 1
	case strings.HasPrefix(p, `'`) && len(p) > 1 && strings.HasSuffix(p, `'`):
		return p[1 : len(p)-1], k + 1
	default:
		return "", 0
	}
	first := p[3:]
	if i := strings.Index(first, q); i >= 0 {
		return strings.TrimSpace(first[:i]), k + 1
	}
	doc := []string{first}
	for m := k + 1; m < len(body); m++ {
		l := body[m]
		if i := strings.Index(l, q); i >= 0 {
			doc = append(doc, l[:i])
			return dedent(doc), m + 1
		}
		doc = append(doc, l)
		if m-k > 400 {
			break
		}
	}
	return "", 0
}

func dedent(lines []string) string {
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// JS returns one unit per JSDoc comment ("/** ... */") with the declaration
// that follows it (up to the matching closing brace, or the end of the
// statement), plus chunks of at most 60 lines for the code between those
// units, so that undocumented code is covered as well.
func JS(src []byte) []Unit {
	s := string(src)
	var units []Unit
	covered := 0 // byte offset up to which code belongs to a unit
	addChunks := func(from, to int) {
		if from >= to {
			return
		}
		units = append(units, lineChunks(s[from:to], strings.Count(s[:from], "\n")+1, 60)...)
	}
	for pos := 0; pos < len(s); {
		i := strings.Index(s[pos:], "/**")
		if i < 0 {
			break
		}
		start := pos + i
		j := strings.Index(s[start+3:], "*/")
		if j < 0 {
			break
		}
		docEnd := start + 3 + j + 2
		doc := jsDocText(s[start+3 : start+3+j])
		codeStart := docEnd
		for codeStart < len(s) && (s[codeStart] == ' ' || s[codeStart] == '\n' || s[codeStart] == '\t' || s[codeStart] == '\r') {
			codeStart++
		}
		codeEnd := jsDeclEnd(s, codeStart)
		addChunks(covered, start)
		code := s[codeStart:codeEnd]
		if strings.HasPrefix(code, "/**") {
			code = ""
		}
		if doc != "" || code != "" {
			units = append(units, Unit{Lang: "javascript", Kind: "decl", Name: jsName(code), Doc: doc, Code: code, Line: strings.Count(s[:codeStart], "\n") + 1})
		}
		covered = max(codeEnd, docEnd)
		pos = covered
	}
	addChunks(covered, len(s))
	return units
}

func jsDocText(c string) string {
	lines := strings.Split(c, "\n")
	for i, l := range lines {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "*")
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// jsDeclEnd returns the end of the declaration starting at s[i]: after the
// brace that closes the first top-level "{", or after the first ";" or
// newline at depth zero if the declaration has no body. It skips strings
// and comments, and gives up after 200 lines.
func jsDeclEnd(s string, i int) int {
	depth := 0
	opened := false
	lines := 0
	for k := i; k < len(s); k++ {
		c := s[k]
		switch c {
		case '\n':
			lines++
			if lines > 200 {
				return k
			}
			if depth == 0 && !opened {
				// A declaration whose body starts on the next line keeps
				// going; a finished statement stops here.
				t := strings.TrimRight(s[i:k], " \t\r")
				if strings.HasSuffix(t, ";") || strings.HasSuffix(t, ",") || t == "" {
					return k
				}
			}
		case '"', '\'', '`':
			k = skipString(s, k)
		case '/':
			if k+1 < len(s) && s[k+1] == '/' {
				e := strings.IndexByte(s[k:], '\n')
				if e < 0 {
					return len(s)
				}
				k += e - 1
			} else if k+1 < len(s) && s[k+1] == '*' {
				if strings.HasPrefix(s[k:], "/**") && depth == 0 {
					return k
				}
				e := strings.Index(s[k+2:], "*/")
				if e < 0 {
					return len(s)
				}
				k += e + 3
			}
		case '{', '(', '[':
			depth++
			if c == '{' {
				opened = true
			}
		case '}', ')', ']':
			depth--
			if depth <= 0 && opened && c == '}' {
				return k + 1
			}
			if depth < 0 {
				return k
			}
		case ';':
			if depth == 0 {
				return k + 1
			}
		}
	}
	return len(s)
}

func skipString(s string, k int) int {
	q := s[k]
	for m := k + 1; m < len(s); m++ {
		switch s[m] {
		case '\\':
			m++
		case q:
			return m
		case '\n':
			if q != '`' {
				return m - 1
			}
		}
	}
	return len(s) - 1
}

// jsName guesses the declared name from the first line of a declaration.
func jsName(code string) string {
	line := code
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	for _, kw := range []string{"function*", "function", "class", "const", "let", "var", "interface", "type", "enum"} {
		if i := strings.Index(line, kw+" "); i >= 0 {
			return identPrefix(strings.TrimLeft(line[i+len(kw)+1:], " *"))
		}
	}
	for _, w := range []string{"export ", "default ", "async ", "static ", "public ", "private ", "protected ", "readonly ", "get ", "set "} {
		line = strings.TrimPrefix(strings.TrimSpace(line), w)
	}
	return identPrefix(line)
}

// lineChunks splits text into chunks of at most n lines, skipping chunks
// with no letters.
func lineChunks(text string, firstLine, n int) []Unit {
	lines := strings.Split(text, "\n")
	var units []Unit
	for i := 0; i < len(lines); i += n {
		j := min(i+n, len(lines))
		c := strings.TrimSpace(strings.Join(lines[i:j], "\n"))
		if !hasLetter(c) {
			continue
		}
		units = append(units, Unit{Lang: "javascript", Kind: "chunk", Code: c, Line: firstLine + i})
	}
	return units
}

func hasLetter(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if unicode.IsLetter(r) {
			return true
		}
		s = s[n:]
	}
	return false
}
