package chunk

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// splitter holds the state of one Split call.
type splitter struct {
	src []byte
	o   Options
	// ls[i] is the byte offset where line i (0-based) starts; ls[nLines()]
	// is len(src). A final line without '\n' counts as a line.
	ls     []int
	chunks []Chunk
	syms   []Symbol
}

func newSplitter(src []byte, o Options) *splitter {
	n := bytes.Count(src, []byte{'\n'})
	ls := make([]int, 1, n+2)
	for off := 0; ; {
		i := bytes.IndexByte(src[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
		if off < len(src) {
			ls = append(ls, off)
		}
	}
	ls = append(ls, len(src))
	return &splitter{src: src, o: o, ls: ls}
}

func (s *splitter) nLines() int { return len(s.ls) - 1 }

// lineOf returns the 0-based line holding byte off.
func (s *splitter) lineOf(off int) int {
	i := sort.SearchInts(s.ls, off+1) - 1
	return min(max(i, 0), s.nLines()-1)
}

// lastLine returns the 0-based line holding the last byte of [start, end).
func (s *splitter) lastLine(start, end int) int {
	return s.lineOf(max(end-1, start))
}

// size returns the byte size of lines a..b (inclusive).
func (s *splitter) size(a, b int) int { return s.ls[b+1] - s.ls[a] }

// fits reports whether lines a..b make one chunk within the caps.
func (s *splitter) fits(a, b int) bool {
	return b-a+1 <= s.o.MaxLines && s.size(a, b) <= s.o.MaxBytes
}

// emit appends the chunk of lines a..b.
func (s *splitter) emit(a, b int, kind, sym string) {
	s.emitBytes(a, b, s.ls[a], s.ls[b+1], kind, sym)
}

func (s *splitter) emitBytes(a, b, start, end int, kind, sym string) {
	s.chunks = append(s.chunks, Chunk{
		StartLine: a + 1, EndLine: b + 1,
		StartOffset: start, EndOffset: end,
		Kind: kind, Symbol: sym,
		Content: string(s.src[start:end]),
	})
}

// windows covers lines a..b with one chunk if they fit, else with windows
// of at most MaxLines lines and MaxBytes bytes, consecutive windows sharing
// up to Overlap lines (at most half of the earlier window, and never so many
// that the next window could not take a new line).
func (s *splitter) windows(a, b int, kind, sym string) {
	if a > b {
		return
	}
	if s.fits(a, b) {
		s.emit(a, b, kind, sym)
		return
	}
	for i := a; i <= b; {
		if s.size(i, i) > s.o.MaxBytes {
			s.splitLine(i, kind, sym)
			i++
			continue
		}
		j := i
		for j < b && s.fits(i, j+1) {
			j++
		}
		s.emit(i, j, kind, sym)
		if j >= b {
			break
		}
		ov := min(s.o.Overlap, (j-i+1)/2)
		for ov > 0 && !s.fits(j+1-ov, j+1) {
			ov--
		}
		i = j + 1 - ov
	}
}

// splitLine cuts line i, longer than MaxBytes, into pieces of at most
// MaxBytes bytes.
func (s *splitter) splitLine(i int, kind, sym string) {
	start, end := s.ls[i], s.ls[i+1]
	for start < end {
		e := end
		if e-start > s.o.MaxBytes {
			e = s.cut(start, start+s.o.MaxBytes)
		}
		s.emitBytes(i, i, start, e, kind, sym)
		start = e
	}
}

// cut returns where to end a piece that starts at start and may end at
// limit at the latest: after the last space or punctuation in the last
// eighth of the piece, else at the last UTF-8 sequence start at or before
// limit (a run of invalid bytes is cut anywhere after 3 bytes).
func (s *splitter) cut(start, limit int) int {
	for p := limit - 1; p > start && p >= limit-s.o.MaxBytes/8; p-- {
		switch s.src[p] {
		case ' ', '\t', ',', ';', '{', '}', '(', ')', '[', ']', '>':
			return p + 1
		}
	}
	e := limit
	for k := 0; k < 3 && e > start+1 && !utf8.RuneStart(s.src[e]); k++ {
		e--
	}
	if !utf8.RuneStart(s.src[e]) {
		return limit
	}
	return e
}

// trivial reports whether lines a..b hold nothing but blanks and closing or
// opening punctuation, optionally preceded by the keyword word (the "type ("
// of a Go declaration group): such lines join a neighbouring chunk rather
// than make one of their own.
func (s *splitter) trivial(a, b int, word string) bool {
	for i := a; i <= b; i++ {
		l := bytes.TrimSpace(s.src[s.ls[i]:s.ls[i+1]])
		if word != "" && bytes.HasPrefix(l, []byte(word)) {
			l = bytes.TrimSpace(l[len(word):])
		}
		for _, c := range l {
			switch c {
			case '{', '}', '(', ')', '[', ']', ';', ',':
			default:
				return false
			}
		}
	}
	return true
}

// item is one child of a container (a file, a class body, a Go declaration
// group) in the syntax tree.
type item struct {
	start, end int // byte range, including attached comments
	def        bool
	attachable bool // a comment or decorator that may belong to the next item
	attached   bool // an attachable now part of the next item
	kind, name string
	// container items (classes) may be split into their members when they
	// do not fit in one chunk.
	container bool
	members   []item
	// header is a keyword that makes the container's header line trivial
	// ("type" for "type (").
	header string
}

// attachComments extends each item's start over the comments and
// decorators directly above it: each on its own line(s), with no blank line
// between them and the item. A definition's chunk then holds its doc
// comment, and packed module code is never cut between a comment and the
// code it describes.
func (s *splitter) attachComments(items []item) {
	for i := range items {
		if items[i].attachable {
			continue
		}
		startLine := s.lineOf(items[i].start)
		for j := i - 1; j >= 0 && items[j].attachable; j-- {
			c := &items[j]
			if s.lastLine(c.start, c.end) < startLine-1 || !s.ownLine(c.start) {
				break
			}
			if j > 0 && s.lastLine(items[j-1].start, items[j-1].end) >= s.lineOf(c.start) {
				break // shares its line with earlier code
			}
			items[i].start = c.start
			c.attached = true
			startLine = s.lineOf(c.start)
		}
	}
}

// ownLine reports whether only blanks precede byte off on its line.
func (s *splitter) ownLine(off int) bool {
	l := s.lineOf(off)
	return len(bytes.TrimSpace(s.src[s.ls[l]:off])) == 0
}

type span struct {
	a, b int
	it   *item // nil for a gap
}

// region chunks lines a..b of a container: each definition in items gets
// its own chunk (a container that does not fit is split recursively), the
// lines between them are packed into chunks of the given kind and symbol at
// item boundaries, and lines with nothing but blanks and brackets join a
// neighbouring chunk.
func (s *splitter) region(a, b int, items []item, kind, sym, header string) {
	var segs []span
	var breaks []int // first lines of non-definition items
	next := a
	for i := range items {
		it := &items[i]
		if it.attached {
			continue
		}
		sl := max(s.lineOf(it.start), a)
		el := min(s.lastLine(it.start, it.end), b)
		if !it.def {
			if sl >= next {
				breaks = append(breaks, sl)
			}
			continue
		}
		sl = max(sl, next)
		if sl > el {
			continue // on lines an earlier definition already holds
		}
		if sl > next {
			segs = append(segs, span{a: next, b: sl - 1})
		}
		segs = append(segs, span{a: sl, b: el, it: it})
		next = el + 1
	}
	if next <= b {
		segs = append(segs, span{a: next, b: b})
	}
	sort.Ints(breaks) // already sorted unless the tree is odd

	// Trivial gaps join a neighbouring definition.
	out := segs[:0]
	for k := 0; k < len(segs); k++ {
		g := segs[k]
		if g.it != nil {
			out = append(out, g)
			continue
		}
		if !s.trivial(g.a, g.b, header) {
			// Blank lines at the top of a run of code end the definition
			// above it instead.
			lead := g.a
			for lead < g.b && s.trivial(lead, lead, "") {
				lead++
			}
			if n := len(out); lead > g.a && n > 0 && out[n-1].it != nil && s.canExtend(out[n-1], g.a, lead-1) {
				out[n-1].b = lead - 1
				g.a = lead
			}
			out = append(out, g)
			continue
		}
		var prev, next *span
		if n := len(out); n > 0 && out[n-1].it != nil {
			prev = &out[n-1]
		}
		if k+1 < len(segs) && segs[k+1].it != nil {
			next = &segs[k+1]
		}
		if g, ok := s.absorb(g, prev, next); ok {
			out = append(out, g)
		}
	}

	for _, g := range out {
		switch {
		case g.it == nil:
			s.pack(g.a, g.b, breaks, kind, sym)
		case g.it.container && !s.fits(g.a, g.b):
			s.region(g.a, g.b, g.it.members, g.it.kind, g.it.name, g.it.header)
		default:
			s.windows(g.a, g.b, g.it.kind, g.it.name)
		}
	}
}

// absorb hands the trivial lines of gap g to the definition before it
// (prev) or after it (next), either possibly nil, and returns what is left
// of g, if anything. A neighbour that fits in one chunk and still fits
// with all of g is preferred, then one that is windowed or split anyway;
// failing both, each neighbour takes as many lines as keep it whole.
func (s *splitter) absorb(g span, prev, next *span) (span, bool) {
	fits := func(sp *span) bool { return sp != nil && s.fits(sp.a, sp.b) }
	switch {
	case fits(prev) && s.fits(prev.a, g.b):
		prev.b = g.b
	case fits(next) && s.fits(g.a, next.b):
		next.a = g.a
	case prev != nil && !fits(prev):
		prev.b = g.b
	case next != nil && !fits(next):
		next.a = g.a
	default:
		for prev != nil && g.a <= g.b && s.fits(prev.a, g.a) {
			prev.b = g.a
			g.a++
		}
		for next != nil && g.a <= g.b && s.fits(g.b, next.b) {
			next.a = g.b
			g.b--
		}
		return g, g.a <= g.b
	}
	return g, false
}

// canExtend reports whether lines a..b may join span sp: the result fits,
// or sp did not fit anyway.
func (s *splitter) canExtend(sp span, a, b int) bool {
	return !s.fits(sp.a, sp.b) || s.fits(min(sp.a, a), max(sp.b, b))
}

// pack covers lines a..b with as few chunks as the caps allow, each ending
// just before one of breaks (sorted first lines of items) or at b; a run
// between two breaks too long for one chunk is cut into windows.
func (s *splitter) pack(a, b int, breaks []int, kind, sym string) {
	k := sort.SearchInts(breaks, a+1)
	for cur := a; cur <= b; {
		for k < len(breaks) && breaks[k] <= cur {
			k++
		}
		best, first := -1, -1
		j := k
		for ; j < len(breaks) && breaks[j] <= b; j++ {
			e := breaks[j] - 1
			if first < 0 {
				first = e
			}
			if !s.fits(cur, e) {
				break
			}
			best = e
		}
		if j == len(breaks) || breaks[j] > b {
			if first < 0 {
				first = b
			}
			if s.fits(cur, b) {
				best = b
			}
		}
		if best < 0 {
			s.windows(cur, first, kind, sym)
			cur = first + 1
			continue
		}
		s.emit(cur, best, kind, sym)
		cur = best + 1
	}
}
