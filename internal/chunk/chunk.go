// Package chunk splits source files into retrieval chunks and extracts the
// definitions (symbols) they contain.
//
// Go, Python, JavaScript (including JSX), TypeScript (including TSX) and Java
// are parsed with tree-sitter grammars: every top-level definition becomes its
// own chunk (with the comments, doc comments and decorators directly above
// it), top-level code between definitions is packed into "module" chunks, and
// classes larger than Options.MaxLines are split into a header chunk plus one
// chunk per method. Every other language, and any file the parser cannot
// handle, is cut into overlapping line windows.
//
// Whatever the language, the chunks of a file cover every one of its lines,
// are returned in file order, never exceed Options.MaxLines lines or
// Options.MaxBytes bytes (a single line longer than MaxBytes is cut into
// pieces, never inside a UTF-8 sequence), and depend only on the input: the
// same path, language, source and options always give the same chunks.
//
// Split is safe for concurrent use. Parsers are pooled per language; syntax
// trees and cursors are released before Split returns.
package chunk

import (
	"cmp"
	"slices"
	"strings"
)

// Chunk is a contiguous piece of a file used for BM25 and vector retrieval.
type Chunk struct {
	// StartLine and EndLine are the 1-based, inclusive line range.
	StartLine, EndLine int
	// StartOffset and EndOffset are byte offsets into the file, [start, end).
	StartOffset, EndOffset int
	// Kind is "function", "method", "class", "type", "interface", "module"
	// (top-level code between definitions) or "window" (line windows of a
	// file without grammar). A definition cut into windows keeps its kind.
	Kind string
	// Symbol is the qualified-ish name of the definition the chunk holds
	// ("Server.ServeHTTP", "parse_args", "Outer.Inner.method"); chunks of a
	// split class's header and fields carry the class name; "" for module
	// code and windows.
	Symbol string
	// Content is src[StartOffset:EndOffset].
	Content string
}

// Symbol is one definition, for symbol search (sym:) in the trigram index.
type Symbol struct {
	// Name is the qualified name: "Recv.Method" for Go methods,
	// "Class.method" for methods and fields, "Outer.Inner" for nested
	// classes, the bare name at top level. src[StartOffset:EndOffset] is the
	// name token itself, that is the last component of Name.
	Name string
	// Kind is one of the chunk kinds "function", "method", "class", "type",
	// "interface", or "field", "const", "var".
	Kind string
	// Parent is the qualified name of the enclosing type or class ("" at top
	// level), so that Name == Parent + "." + token when Parent != "".
	Parent string
	// Line is the 1-based line of the name token.
	Line int
	// StartOffset and EndOffset are the byte range of the name token.
	StartOffset, EndOffset int
}

// Options bounds chunk sizes. The zero value means the defaults.
type Options struct {
	// MaxLines caps a chunk's length in lines (0 means 60). Larger
	// definitions are split into windows that keep the definition's Kind
	// and Symbol.
	MaxLines int
	// Overlap is the number of lines shared by consecutive windows of one
	// definition or one run of code (0 means 8, negative means none). It is
	// at most half the window it follows.
	Overlap int
	// MaxBytes caps a chunk's size in bytes (0 means 6000, minimum 16). A
	// line longer than that is cut into pieces at a UTF-8 boundary,
	// preferably after a space or punctuation.
	MaxBytes int
}

// Defaults for the zero Options.
const (
	DefaultMaxLines = 60
	DefaultOverlap  = 8
	DefaultMaxBytes = 6000
)

func (o Options) normalized() Options {
	if o.MaxLines <= 0 {
		o.MaxLines = DefaultMaxLines
	}
	switch {
	case o.Overlap == 0:
		o.Overlap = DefaultOverlap
	case o.Overlap < 0:
		o.Overlap = 0
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxBytes < 16 {
		o.MaxBytes = 16
	}
	return o
}

// Chunk kinds.
const (
	KindFunction  = "function"
	KindMethod    = "method"
	KindClass     = "class"
	KindType      = "type"
	KindInterface = "interface"
	KindModule    = "module"
	KindWindow    = "window"
	// Symbol-only kinds.
	KindField = "field"
	KindConst = "const"
	KindVar   = "var"
)

// Split chunks src, the content of the file at path, and returns its chunks
// and the definitions found in it (none for languages without grammar),
// both in file order; symbols' name ranges never overlap.
//
// lang is a language name as the files package's language map returns it
// ("go", "python", "javascript", "jsx", "typescript", "tsx", "java", ...;
// "" means: guess from the extension). A "typescript" file whose path ends
// in ".tsx" is parsed with the TSX grammar. Languages for which Supported is
// false are cut into line windows, as are files the parser gives up on.
// An empty src gives no chunks.
func Split(path, lang string, src []byte, o Options) (chunks []Chunk, symbols []Symbol) {
	if len(src) == 0 {
		return nil, nil
	}
	s := newSplitter(src, o.normalized())
	if g := grammarFor(path, lang); g != nil && s.parseable() {
		if s.splitTree(g) {
			// Collected in file order already; made certain, since the
			// trigram index wants sorted, disjoint name ranges.
			slices.SortStableFunc(s.syms, func(a, b Symbol) int { return cmp.Compare(a.StartOffset, b.StartOffset) })
			return s.chunks, s.syms
		}
		s.chunks, s.syms = s.chunks[:0], nil
	}
	s.windows(0, s.nLines()-1, KindWindow, "")
	return s.chunks, nil
}

// Supported reports whether lang gets grammar-based chunking: "go",
// "python", "javascript", "jsx", "typescript", "tsx" and "java"
// (case-insensitive).
func Supported(lang string) bool {
	return grammarByLang(strings.ToLower(lang), "") != nil
}
