// Package codetok is the tokenizer shared by lexical search (BM25) and the
// builtin embedder: it turns source code, comments and natural-language
// queries into the same stream of lower-case terms, so that a query word
// ("server") meets the identifier it names (HTTPServerError).
//
// The rules, applied in this order:
//
//  1. Split on everything that is not a letter or a digit (Unicode-aware; the
//     ASCII path is a byte-level state machine, no regexp).
//  2. Split identifiers into sub-words at camelCase / PascalCase humps, at
//     underscores (by rule 1), at acronym boundaries ("HTTPServer" -> http,
//     server) and at letter/digit boundaries ("utf8" -> utf, 8;
//     "sha256" -> sha, 256). Splitting digits off makes code and prose
//     agree: "UTF-8", "utf8" and "UTF8" all give "utf"; "SHA-256" and
//     "sha256" both give sha, 256. An upper-case acronym followed by a
//     plural "s" stays one word ("IDs", "URLs" -> ids, urls -> id, url).
//  3. Lower-case.
//  4. Drop terms of one character (this also drops single digits:
//     "HTTPServerError2" -> http, server, error) and terms longer than
//     MaxTermLen bytes (hashes, base64 blobs).
//  5. Drop stopwords (see IsStopword): English function words and a handful
//     of keywords that occur in nearly every function of every language
//     (func, def, function, return, var, let, const, nil, null, self, ...).
//     Words that carry meaning in code even when frequent (error, string,
//     type, new, get, set, all, any, true, false, ...) are kept; BM25's IDF
//     and the embedder's weights take care of their frequency.
//  6. Light, conservative plural stemming (see Stem): "files" -> file,
//     "entries" -> entry, "matches" -> match, "classes" -> class,
//     "statuses" -> status; it also folds the third-person verbs of doc
//     comments onto identifiers ("reads" -> read, "returns" -> return).
//     No -ing/-ed stripping: it collides too often in code ("string" ->
//     str, "padding" -> padd) and the embedder learns inflections from data.
//
// Terms is deterministic and allocation-light: it runs at well over 50 MB/s
// on source code (see BenchmarkTerms).
package codetok

import (
	"unicode"
	"unicode/utf8"
)

// MaxTermLen is the longest term kept, in bytes. Longer runs of letters and
// digits are almost always hashes, keys or encoded data.
const MaxTermLen = 40

// Terms returns the terms of text in order of appearance (with repeats).
func Terms(text string) []string {
	return AppendTerms(make([]string, 0, len(text)/8+1), text)
}

// AppendTerms appends the terms of text to dst and returns the extended
// slice.
func AppendTerms(dst []string, text string) []string {
	var s Scanner
	s.Scan(text, func(term []byte) {
		dst = append(dst, string(term))
	})
	return dst
}

// Scanner tokenizes text with a reusable buffer. The zero value is ready to
// use. A Scanner is not safe for concurrent use.
type Scanner struct {
	buf  []byte // current term, lower-cased
	word []byte // current word (letter/digit run) for the Unicode path
}

// Scan calls fn with each term of text, in order. The slice passed to fn is
// only valid during the call.
func (s *Scanner) Scan(text string, fn func(term []byte)) {
	n := len(text)
	i := 0
	for i < n {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiClass[c] == clsOther {
				i++
				continue
			}
			// Find the end of the ASCII alphanumeric run.
			j := i + 1
			for j < n && text[j] < utf8.RuneSelf && asciiClass[text[j]] != clsOther {
				j++
			}
			if j < n && text[j] >= utf8.RuneSelf {
				// The run continues with non-ASCII characters: take the
				// slow path for the whole word.
				i = s.scanUnicode(text, i, fn)
				continue
			}
			s.splitASCII(text[i:j], fn)
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			i += size
			continue
		}
		i = s.scanUnicode(text, i, fn)
	}
}

const (
	clsOther = iota
	clsLower
	clsUpper
	clsDigit
)

var asciiClass = func() (t [128]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clsLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = clsUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clsDigit
	}
	return t
}()

// splitASCII splits one ASCII alphanumeric run into sub-words.
func (s *Scanner) splitASCII(w string, fn func([]byte)) {
	n := len(w)
	start := 0
	for i := 1; i <= n; i++ {
		if i < n && !boundary(w, i) {
			continue
		}
		s.emit(w[start:i], fn)
		start = i
	}
}

// boundary reports whether a new sub-word starts at w[i] (0 < i < len(w)).
func boundary(w string, i int) bool {
	prev, cur := asciiClass[w[i-1]], asciiClass[w[i]]
	switch {
	case prev == cur:
		if cur != clsUpper {
			return false
		}
		// Inside an upper-case run: "HTTPServer" splits before the 'S'
		// that starts a capitalised word, unless what follows is just a
		// plural "s" ("IDs", "URLs").
		if i+1 < len(w) && asciiClass[w[i+1]] == clsLower {
			return !pluralTail(w, i+1)
		}
		return false
	case prev == clsDigit || cur == clsDigit:
		return true
	case prev == clsLower && cur == clsUpper:
		return true
	case prev == clsUpper && cur == clsLower:
		return false
	}
	return false
}

// pluralTail reports whether w[j:] starts with a lone lower-case "s" that
// ends the lower-case run (the plural of an acronym: "IDs", "URLsFor").
func pluralTail(w string, j int) bool {
	if w[j] != 's' {
		return false
	}
	return j+1 == len(w) || asciiClass[w[j+1]] != clsLower
}

// emit lower-cases, filters and stems an ASCII sub-word and hands it to fn.
func (s *Scanner) emit(w string, fn func([]byte)) {
	if len(w) < 2 || len(w) > MaxTermLen {
		return
	}
	b := s.buf[:0]
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	s.buf = b
	s.finish(fn)
}

// finish applies the stopword list and the stemmer to s.buf.
func (s *Scanner) finish(fn func([]byte)) {
	b := s.buf
	if isStop(b) {
		return
	}
	b = stem(b)
	if len(b) < 2 || isStop(b) {
		return
	}
	fn(b)
}

// scanUnicode handles a word (maximal letter/digit run) that contains
// non-ASCII characters, starting at text[i]. It returns the index after the
// word.
func (s *Scanner) scanUnicode(text string, i int, fn func([]byte)) int {
	type rc struct {
		r   rune
		cls uint8
	}
	var runes [64]rc
	rs := runes[:0]
	j := i
	for j < len(text) {
		r, size := utf8.DecodeRuneInString(text[j:])
		var cls uint8
		switch {
		case unicode.IsUpper(r) || unicode.IsTitle(r):
			cls = clsUpper
		case unicode.IsDigit(r):
			cls = clsDigit
		case unicode.IsLetter(r) || unicode.IsMark(r):
			cls = clsLower
		default:
			cls = clsOther
		}
		if cls == clsOther {
			break
		}
		rs = append(rs, rc{r, cls})
		j += size
	}
	start := 0
	flush := func(end int) {
		if end-start < 2 {
			start = end
			return
		}
		b := s.buf[:0]
		for _, x := range rs[start:end] {
			b = utf8.AppendRune(b, unicode.ToLower(x.r))
		}
		start = end
		if len(b) > MaxTermLen {
			return
		}
		s.buf = b
		s.finish(fn)
	}
	for k := 1; k < len(rs); k++ {
		prev, cur := rs[k-1].cls, rs[k].cls
		split := false
		switch {
		case prev == cur:
			if cur == clsUpper && k+1 < len(rs) && rs[k+1].cls == clsLower {
				split = !(rs[k+1].r == 's' && (k+2 == len(rs) || rs[k+2].cls != clsLower))
			}
		case prev == clsDigit || cur == clsDigit:
			split = true
		case prev == clsLower && cur == clsUpper:
			split = true
		}
		if split {
			flush(k)
		}
	}
	flush(len(rs))
	return j
}
