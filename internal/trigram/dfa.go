package trigram

import (
	"regexp/syntax"
	"slices"
	"unicode/utf8"
)

// dfa is a lazily built deterministic automaton that answers "does this
// line contain a match?" for a compiled program, one table lookup per ASCII
// byte. It is used when no literal narrows down the candidate lines (a
// pattern like [A-Z]{5,} or \d{4,}): Go's regexp has no DFA, and running it
// on every line of every file is some ten times slower than ripgrep.
//
// It has ripgrep's semantics, like vm: Unicode word boundaries, and an
// invalid UTF-8 byte matches no instruction. Zero-width assertions are
// resolved when the next rune is known: a state is the set of program
// counters waiting for their empty-width closure, plus whether the previous
// rune was a word character and whether the line has just started.
//
// A dfa is not safe for concurrent use; each scanner has its own.
type dfa struct {
	prog   *syntax.Prog
	states []*dstate
	tab    []int32 // transitions, 256 per state
	end    []int8  // per state: does a match end at the end of the line? 0 unknown, 1 yes, 2 no
	index  map[string]int32
	failed bool // too many states: the caller falls back to the regexp

	// scratch for closure computation
	visited []uint32 // generation per pc
	gen     uint32
	stack   []uint32
	runes   []uint32
	next    []uint32
	key     []byte
}

type dstate struct {
	pcs               []uint32
	atStart, prevWord bool
	other             map[rune]int32 // transitions on non-ASCII runes
}

// Transition table entries (d.tab, 256 per state, indexed by byte): the
// next state's index+1, or one of these.
const (
	dUnknown  = 0  // not computed yet
	dMatched  = -1 // a match ends before this byte: the line matches
	dNewline  = -2 // '\n': end of line
	dNonASCII = -3 // a byte >= 0x80: decode the rune, see dstate.other

	maxDFAStates = 4096
)

func newDFA(prog *syntax.Prog) *dfa {
	d := &dfa{prog: prog, index: map[string]int32{}, visited: make([]uint32, len(prog.Inst))}
	d.intern([]uint32{uint32(prog.Start)}, true, false) // state 0: line start
	return d
}

func (d *dfa) intern(pcs []uint32, atStart, prevWord bool) int32 {
	d.key = d.key[:0]
	flags := byte(0)
	if atStart {
		flags |= 1
	}
	if prevWord {
		flags |= 2
	}
	d.key = append(d.key, flags)
	for _, pc := range pcs {
		d.key = append(d.key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if i, ok := d.index[string(d.key)]; ok {
		return i
	}
	if len(d.states) >= maxDFAStates {
		d.failed = true
		return 0
	}
	i := int32(len(d.states))
	d.states = append(d.states, &dstate{pcs: slices.Clone(pcs), atStart: atStart, prevWord: prevWord})
	row := make([]int32, 256)
	row['\n'] = dNewline
	for b := utf8.RuneSelf; b < 256; b++ {
		row[b] = dNonASCII
	}
	d.tab = append(d.tab, row...)
	d.end = append(d.end, 0)
	d.index[string(d.key)] = i
	return i
}

// closure follows empty transitions from s's pcs given the rune that comes
// next (-1 at the end of the line) and collects the rune instructions into
// d.runes. It reports whether a Match instruction is reachable.
func (d *dfa) closure(s *dstate, r rune) bool {
	var flags syntax.EmptyOp
	if s.atStart {
		flags |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if r == -1 {
		flags |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if s.prevWord != (r >= 0 && isWordRune(r)) {
		flags |= syntax.EmptyWordBoundary
	} else {
		flags |= syntax.EmptyNoWordBoundary
	}
	d.gen++
	if d.gen == 0 { // wrapped: reset
		clear(d.visited)
		d.gen = 1
	}
	d.runes = d.runes[:0]
	d.stack = append(d.stack[:0], s.pcs...)
	matched := false
	for len(d.stack) > 0 {
		pc := d.stack[len(d.stack)-1]
		d.stack = d.stack[:len(d.stack)-1]
		if d.visited[pc] == d.gen {
			continue
		}
		d.visited[pc] = d.gen
		in := &d.prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			matched = true
		case syntax.InstAlt, syntax.InstAltMatch:
			d.stack = append(d.stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			d.stack = append(d.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^flags == 0 {
				d.stack = append(d.stack, in.Out)
			}
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			d.runes = append(d.runes, pc)
		}
	}
	return matched
}

// step computes the transition of state si on rune r (or invalidRune).
func (d *dfa) step(si int32, r rune) int32 {
	s := d.states[si]
	if d.closure(s, r) {
		return dMatched
	}
	d.next = d.next[:0]
	if r >= 0 {
		for _, pc := range d.runes {
			in := &d.prog.Inst[pc]
			ok := false
			switch in.Op {
			case syntax.InstRune1:
				ok = r == in.Rune[0]
			case syntax.InstRune:
				ok = in.MatchRune(r)
			case syntax.InstRuneAny:
				ok = true
			case syntax.InstRuneAnyNotNL:
				ok = r != '\n'
			}
			if ok {
				d.next = append(d.next, in.Out)
			}
		}
	}
	// Unanchored search: a match may start after this rune too.
	d.next = append(d.next, uint32(d.prog.Start))
	slices.Sort(d.next)
	d.next = slices.Compact(d.next)
	return d.intern(d.next, false, r >= 0 && isWordRune(r)) + 1
}

// trans returns the cached transition of state si on rune r.
func (d *dfa) trans(si int32, r rune) int32 {
	if r >= 0 && r < utf8.RuneSelf {
		if t := d.tab[int(si)<<8|int(r)]; t != dUnknown {
			return t
		}
		t := d.step(si, r)
		d.tab[int(si)<<8|int(r)] = t
		return t
	}
	s := d.states[si]
	if t, ok := s.other[r]; ok {
		return t
	}
	t := d.step(si, r)
	if s.other == nil {
		s.other = map[rune]int32{}
	}
	s.other[r] = t
	return t
}

// endOfLine reports whether a match ends at the end of the line.
func (d *dfa) endOfLine(si int32) bool {
	if d.end[si] == 0 {
		d.end[si] = 2
		if d.closure(d.states[si], -1) {
			d.end[si] = 1
		}
	}
	return d.end[si] == 1
}

// scanLines calls hit(lineNo, start, end) for every line of t that contains
// a match. It returns false if the automaton grew too large; the caller
// must then redo the scan another way.
func (d *dfa) scanLines(t []byte, hit func(lineNo, start, end int)) bool {
	lineNo, start := 1, 0
	var si int32
	tab := d.tab
	for i := 0; i < len(t); {
		v := tab[int(si)<<8|int(t[i])]
		if v > 0 { // the hot path: an ASCII byte with a known transition
			si = v - 1
			i++
			continue
		}
		switch v {
		case dNewline:
			if e := d.end[si]; e == 1 || e == 0 && d.endOfLine(si) {
				hit(lineNo, start, i)
			}
			i++
			lineNo, start, si = lineNo+1, i, 0
			continue
		case dUnknown:
			v = d.trans(si, rune(t[i]))
			i++
		case dNonASCII:
			r, w := utf8.DecodeRune(t[i:])
			if r == utf8.RuneError && w == 1 {
				r = invalidRune
			}
			v = d.trans(si, r)
			i += w
		}
		if d.failed {
			return false
		}
		tab = d.tab // may have grown
		if v == dMatched {
			end := lineEnd(t, start)
			hit(lineNo, start, end)
			if end == len(t) {
				return true
			}
			i = end + 1
			lineNo, start, si = lineNo+1, i, 0
			continue
		}
		si = v - 1
	}
	if start < len(t) && d.endOfLine(si) {
		hit(lineNo, start, len(t))
	}
	return !d.failed
}
