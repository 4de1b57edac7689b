package trigram

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrInvalidPattern is wrapped by every error Search returns for a pattern
// that cannot be used: a syntax error, or a pattern that could match a line
// terminator (ripgrep without -U refuses those too).
var ErrInvalidPattern = errors.New("invalid pattern")

// matcher finds the first match of the user's pattern in one line, the way
// ripgrep's default engine (Rust regex, Unicode mode) would.
//
// Go's regexp is RE2 like Rust's, but differs in three places that matter for
// code search, which matcher papers over:
//   - \d \w \s are ASCII-only in Go and Unicode in Rust: the pattern text is
//     rewritten to explicit Unicode classes before parsing (rewritePerlClasses).
//   - \b \B are ASCII-only in Go: lines with non-ASCII bytes are matched by a
//     small Pike VM (vm.go) that uses Unicode word characters.
//   - Go matches an invalid UTF-8 byte as U+FFFD; Rust matches it with nothing
//     (not even . or [^a]): lines with invalid UTF-8 also go to the VM, which
//     lets no instruction consume such a byte.
type matcher struct {
	re   *regexp.Regexp
	syn  *syntax.Regexp // parsed rewritten pattern, input of analyze
	prog *syntax.Prog
	// wordBoundary is set when the program has \b or \B, so that any
	// non-ASCII line must take the Unicode-aware VM.
	wordBoundary bool
}

// compilePattern validates a query pattern and compiles it with ripgrep's
// semantics (see matcher). Errors wrap ErrInvalidPattern.
func compilePattern(pattern string, literal, caseSensitive bool) (*matcher, error) {
	if literal {
		pattern = regexp.QuoteMeta(pattern)
	}
	// Parse the pattern as written first, so that syntax errors quote the
	// user's text rather than our expansion of \w and friends.
	if _, err := syntax.Parse(pattern, syntax.Perl); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	expr := rewritePerlClasses(pattern)
	if !caseSensitive {
		expr = "(?i)" + expr
	}
	syn, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	if hasNewlineLiteral(syn) || newlineInAlternation(pattern) {
		// Same rule and wording as ripgrep 13 without --multiline: a literal
		// line feed can never match inside one line, so the pattern is refused
		// instead of silently matching nothing.
		return nil, fmt.Errorf("%w: the literal '\\n' is not allowed in a regex (matching is per line; multiline patterns are not supported)", ErrInvalidPattern)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	prog, err := syntax.Compile(syn.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	m := &matcher{re: re, syn: syn, prog: prog}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&(syntax.EmptyWordBoundary|syntax.EmptyNoWordBoundary) != 0 {
			m.wordBoundary = true
		}
	}
	return m, nil
}

// hasNewlineLiteral reports whether re contains a literal line feed, which is
// what ripgrep rejects ("[\n]" and "\x0A" are literals after parsing; "[\na]"
// is a class and is allowed, its \n can simply never match inside a line).
func hasNewlineLiteral(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasNewlineLiteral(s) {
			return true
		}
	}
	return false
}

// newlineInAlternation catches what hasNewlineLiteral cannot see: Go's
// parser merges single-character alternatives into a class ("a|\n" becomes
// "[\na]"), while ripgrep still sees, and rejects, the literal \n. Wrapping
// every line feed written outside a class in a capture group keeps it a
// literal through Go's factoring.
func newlineInAlternation(p string) bool {
	if !strings.ContainsAny(p, "|") {
		return false
	}
	var b strings.Builder
	inClass, classStart, marked := false, false, false
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			if !inClass {
				if w := newlineEscapeLen(p[i:]); w > 0 {
					b.WriteString(`(\n)`)
					i += w
					marked = true
					continue
				}
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i += 2
			classStart = false
			continue
		case c == '\n' && !inClass:
			b.WriteString(`(\n)`)
			i++
			marked = true
			continue
		case inClass:
			if c == ']' && !classStart {
				inClass = false
			}
			classStart = false
		case c == '[':
			inClass, classStart = true, true
			b.WriteByte(c)
			i++
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
			continue
		}
		b.WriteByte(c)
		i++
	}
	if !marked {
		return false
	}
	re, err := syntax.Parse(b.String(), syntax.Perl)
	return err == nil && hasNewlineLiteral(re)
}

// newlineEscapeLen returns the length of the escape at the start of s if it
// denotes a line feed (\n, \x0A, \x{A}), else 0.
func newlineEscapeLen(s string) int {
	switch {
	case strings.HasPrefix(s, `\n`):
		return 2
	case len(s) >= 4 && s[1] == 'x' && s[2] != '{':
		if v, err := strconv.ParseUint(s[2:4], 16, 8); err == nil && v == '\n' {
			return 4
		}
	case strings.HasPrefix(s, `\x{`):
		if end := strings.IndexByte(s, '}'); end > 3 {
			if v, err := strconv.ParseUint(s[3:end], 16, 32); err == nil && v == '\n' {
				return end + 1
			}
		}
	}
	return 0
}

// needsVM reports whether line must be matched by the Unicode-aware VM
// instead of Go's regexp.
func (m *matcher) needsVM(line []byte) bool {
	if m.wordBoundary {
		for _, c := range line {
			if c >= utf8.RuneSelf {
				return true
			}
		}
		return false
	}
	return !utf8.Valid(line)
}

// rangeList is a sorted, non-overlapping list of inclusive rune ranges.
type rangeList [][2]rune

var (
	// wordRanges is Rust regex's Unicode \w: Alphabetic, M, Nd, Pc and
	// Join_Control (UTS#18 "word"). Alphabetic is derived from its
	// definition: L, Nl, Other_Alphabetic, plus Other_Lowercase and
	// Other_Uppercase (parts of Lowercase/Uppercase).
	wordRanges = mergeTables(unicode.L, unicode.Nl, unicode.Other_Alphabetic,
		unicode.Other_Lowercase, unicode.Other_Uppercase, unicode.M, unicode.Nd,
		unicode.Pc, unicode.Join_Control)
	// spaceRanges is Rust's Unicode \s: the White_Space property.
	spaceRanges = mergeTables(unicode.White_Space)

	wordClass, notWordClass   = wordRanges.classBody(), wordRanges.complement().classBody()
	spaceClass, notSpaceClass = spaceRanges.classBody(), spaceRanges.complement().classBody()
)

func mergeTables(tabs ...*unicode.RangeTable) rangeList {
	var rs rangeList
	for _, t := range tabs {
		for _, r := range t.R16 {
			for lo := rune(r.Lo); lo <= rune(r.Hi); lo += rune(r.Stride) {
				if r.Stride == 1 {
					rs = append(rs, [2]rune{rune(r.Lo), rune(r.Hi)})
					break
				}
				rs = append(rs, [2]rune{lo, lo})
			}
		}
		for _, r := range t.R32 {
			for lo := rune(r.Lo); lo <= rune(r.Hi); lo += rune(r.Stride) {
				if r.Stride == 1 {
					rs = append(rs, [2]rune{rune(r.Lo), rune(r.Hi)})
					break
				}
				rs = append(rs, [2]rune{lo, lo})
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var out rangeList
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			if r[1] > out[n-1][1] {
				out[n-1][1] = r[1]
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func (rl rangeList) contains(r rune) bool {
	i := sort.Search(len(rl), func(i int) bool { return rl[i][1] >= r })
	return i < len(rl) && rl[i][0] <= r
}

func (rl rangeList) complement() rangeList {
	var out rangeList
	next := rune(0)
	for _, r := range rl {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

// classBody renders the ranges as the inside of a Go character class.
func (rl rangeList) classBody() string {
	var b strings.Builder
	for _, r := range rl {
		if r[0] == r[1] {
			fmt.Fprintf(&b, `\x{%X}`, r[0])
		} else {
			fmt.Fprintf(&b, `\x{%X}-\x{%X}`, r[0], r[1])
		}
	}
	return b.String()
}

// isWordRune is Rust's Unicode word-character test, used for \b in the VM.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	}
	return wordRanges.contains(r)
}

// rewritePerlClasses replaces the Perl classes \d \D \w \W \s \S in a Go
// regexp by explicit Unicode classes with Rust's (ripgrep's) meaning. It
// tracks character classes so that an escape inside [...] expands to ranges
// rather than to a nested class, and leaves \Q...\E, \p{..} and every other
// escape untouched. Only the text is rewritten; validity was checked by the
// caller on the original text.
func rewritePerlClasses(p string) string {
	if !strings.ContainsAny(p, `\`) {
		return p
	}
	var b strings.Builder
	inClass, classStart := false, false
	for i := 0; i < len(p); {
		c := p[i]
		if c == '\\' && i+1 < len(p) {
			n := p[i+1]
			switch n {
			case 'd', 'D', 'w', 'W', 's', 'S':
				b.WriteString(perlExpansion(n, inClass))
				i += 2
				classStart = false
				continue
			case 'Q':
				if !inClass {
					end := strings.Index(p[i+2:], `\E`)
					if end < 0 {
						b.WriteString(p[i:])
						return b.String()
					}
					b.WriteString(p[i : i+2+end+2])
					i += 2 + end + 2
					continue
				}
			case 'p', 'P':
				if i+2 < len(p) && p[i+2] == '{' {
					if end := strings.IndexByte(p[i+2:], '}'); end >= 0 {
						b.WriteString(p[i : i+2+end+1])
						i += 2 + end + 1
						classStart = false
						continue
					}
				}
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i += 2
			classStart = false
			continue
		}
		if inClass {
			if c == '[' && i+1 < len(p) && p[i+1] == ':' {
				if end := strings.Index(p[i+2:], ":]"); end >= 0 {
					b.WriteString(p[i : i+2+end+2])
					i += 2 + end + 2
					classStart = false
					continue
				}
			}
			if c == ']' && !classStart {
				inClass = false
			}
			classStart = false
			b.WriteByte(c)
			i++
			continue
		}
		b.WriteByte(c)
		i++
		if c == '[' {
			inClass, classStart = true, true
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
		}
	}
	return b.String()
}

func perlExpansion(n byte, inClass bool) string {
	var body string
	switch n {
	case 'd': // Rust's Unicode \d is general category Nd
		return `\p{Nd}`
	case 'D':
		return `\P{Nd}`
	case 'w':
		body = wordClass
	case 'W':
		body = notWordClass
	case 's':
		body = spaceClass
	case 'S':
		body = notSpaceClass
	}
	if inClass {
		return body
	}
	return "[" + body + "]"
}
