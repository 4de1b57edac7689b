// Package bm25 is the lexical ranking index of a build: an inverted index
// from terms to the chunks that hold them, written once to a flat file,
// memory-mapped and scored term-at-a-time into a dense accumulator.
//
// It replaces SQLite FTS5, which the first version used: in pure-Go SQLite
// FTS5 spends about 3 µs per posting, so a query with common terms took
// 15-20 ms and had to be cut to its rarest terms (which cost ranking
// quality). Decoding a posting here takes a few nanoseconds, every query
// term is scored, and the file is smaller because it stores no positions.
//
// Scoring is BM25F as FTS5's bm25() computes it: a chunk has three fields
// (body, path, symbol); a term's frequency is the weighted sum of its
// counts in them, the length is the total count of terms in all three, and
// IDF is log((N - df + 0.5) / (df + 0.5)), floored at 1e-6.
//
// File layout (little-endian), written front to back in one pass:
//
//	postings: per term, per document in increasing id order:
//	          uvarint((id - previous id) << 1 | one), then byte(tf)
//	          unless one is set, which means tf = 1 (the common case:
//	          once in the body, not in path or symbol)
//	          tf: bits 0-5 body count (capped at 63), bit 6 in path,
//	          bit 7 in symbol
//	lengths:  maxDoc x uint16 (0 = no such document)
//	text:     the terms, sorted, concatenated
//	terms:    nTerms+1 x uint32 offsets into text
//	info:     nTerms x (uint32 df, uint64 postings offset); postings end
//	          where the next term's begin (the last at the lengths section)
//	footer:   uint64 lengths offset, uint64 text offset, uint64 terms
//	          offset, uint64 info offset, uint32 nTerms, uint32 maxDoc,
//	          uint32 nDocs, uint64 total length, "CIDXBM2b"
package bm25

import (
	"errors"
	"fmt"
)

const (
	magic      = "CIDXBM2b" // the last byte changes with the layout
	footerSize = 8*4 + 4*3 + 8 + len(magic)
	infoSize   = 4 + 8
	maxBodyTF  = 63
	pathBit    = 1 << 6
	symbolBit  = 1 << 7
)

// Weights of the fields in a term's frequency. The defaults favour a
// term in the symbol a chunk defines and discount one only in its path.
var Weights = struct{ Body, Path, Symbol float64 }{1.0, 0.6, 1.5}

// BM25 parameters (the usual ones, also FTS5's).
const (
	k1 = 1.2
	b  = 0.75
)

// Doc is one chunk to index: its id (the chunk's rowid) and the terms of
// its fields, with repeats.
type Doc struct {
	ID     uint32
	Body   []string
	Path   []string
	Symbol []string
}

// posting is one document of a term's list.
type posting struct {
	doc uint32
	tf  uint8
}

// ErrFormat means a file is not a BM25 index of this version.
var ErrFormat = errors.New("not a bm25 index file")

func formatErr(path, what string) error {
	return fmt.Errorf("%w: %s: %s", ErrFormat, path, what)
}

// packTF is a document's posting byte for a term.
func packTF(body int, inPath, inSymbol bool) uint8 {
	tf := uint8(min(body, maxBodyTF))
	if inPath {
		tf |= pathBit
	}
	if inSymbol {
		tf |= symbolBit
	}
	return tf
}

// freq is the weighted term frequency a posting byte stands for.
func freq(tf uint8) float64 {
	f := Weights.Body * float64(tf&maxBodyTF)
	if tf&pathBit != 0 {
		f += Weights.Path
	}
	if tf&symbolBit != 0 {
		f += Weights.Symbol
	}
	return f
}
