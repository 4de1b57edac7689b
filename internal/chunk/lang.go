package chunk

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	ts "github.com/tree-sitter/go-tree-sitter"
	tsgo "github.com/tree-sitter/tree-sitter-go/bindings/go"
	tsjava "github.com/tree-sitter/tree-sitter-java/bindings/go"
	tsjs "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspy "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsts "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// family selects the definition collector for a grammar.
type family int

const (
	famGo family = iota
	famPython
	famJS // JavaScript, TypeScript, TSX
	famJava
)

// grammar is one tree-sitter language with its pool of parsers.
type grammar struct {
	name string
	fam  family
	lang *ts.Language
	// fieldName is the id of the "name" field, looked up once.
	fieldName uint16
	pool      sync.Pool // of *parser
}

// parser wraps a tree-sitter parser so that one dropped by the sync.Pool
// (pools shed their contents at garbage collections) has its C memory
// freed by a cleanup instead of leaking.
type parser struct{ p *ts.Parser }

// liveParsers counts parsers not yet closed, for the leak test.
var liveParsers atomic.Int64

func newGrammar(name string, fam family, ptr unsafe.Pointer) *grammar {
	l := ts.NewLanguage(ptr)
	return &grammar{name: name, fam: fam, lang: l, fieldName: l.FieldIdForName("name")}
}

var (
	grammarsOnce                        sync.Once
	gGo, gPython, gJS, gTS, gTSX, gJava *grammar
)

func initGrammars() {
	gGo = newGrammar("go", famGo, tsgo.Language())
	gPython = newGrammar("python", famPython, tspy.Language())
	gJS = newGrammar("javascript", famJS, tsjs.Language())
	gTS = newGrammar("typescript", famJS, tsts.LanguageTypescript())
	gTSX = newGrammar("tsx", famJS, tsts.LanguageTSX())
	gJava = newGrammar("java", famJava, tsjava.Language())
}

// grammarByLang maps a lower-cased language name (and, for TypeScript, the
// lower-cased extension) to its grammar, or nil.
func grammarByLang(lang, ext string) *grammar {
	grammarsOnce.Do(initGrammars)
	switch lang {
	case "go", "golang":
		return gGo
	case "python", "py":
		return gPython
	case "javascript", "js", "jsx":
		return gJS // the JavaScript grammar parses JSX too
	case "typescript", "ts":
		if ext == ".tsx" {
			return gTSX
		}
		return gTS
	case "tsx":
		return gTSX
	case "java":
		return gJava
	}
	return nil
}

// extLangs guesses the language from the extension when none is given.
var extLangs = map[string]string{
	".go": "go", ".py": "python", ".pyi": "python", ".pyw": "python",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
	".java": "java",
}

func grammarFor(path, lang string) *grammar {
	ext := ""
	base := path[strings.LastIndexAny(path, `/\`)+1:]
	if i := strings.LastIndexByte(base, '.'); i >= 0 {
		ext = strings.ToLower(base[i:])
	}
	lang = strings.ToLower(lang)
	if lang == "" {
		lang = extLangs[ext]
	}
	return grammarByLang(lang, ext)
}

// parseTimeoutMicros bounds one parse; a parse that takes longer falls back
// to line windows. Real files parse in well under a second (the 3 MB
// cmd/compile/internal/ssa/opGen.go in 0.3 s), so only a pathological input
// can meet it, and only there could the result depend on machine load.
const parseTimeoutMicros = 20_000_000

func (g *grammar) get() *parser {
	if v := g.pool.Get(); v != nil {
		return v.(*parser)
	}
	p := ts.NewParser()
	if err := p.SetLanguage(g.lang); err != nil {
		p.Close()
		return nil
	}
	p.SetTimeoutMicros(parseTimeoutMicros) //nolint:staticcheck // the replacement needs a Go callback per progress tick
	w := &parser{p: p}
	liveParsers.Add(1)
	runtime.AddCleanup(w, func(p *ts.Parser) {
		p.Close()
		liveParsers.Add(-1)
	}, p)
	return w
}

func (g *grammar) put(w *parser) { g.pool.Put(w) }

// parse parses src with a pooled parser. The caller closes the tree. It
// returns nil when the parser gave up (timeout).
func (g *grammar) parse(src []byte) *ts.Tree {
	w := g.get()
	if w == nil {
		return nil
	}
	t := w.p.Parse(src, nil)
	if t == nil {
		// A halted parse resumes on the next call unless reset.
		w.p.Reset()
	}
	g.put(w)
	return t
}
