package trigram

import (
	"regexp/syntax"
	"unicode/utf8"
)

// invalidRune stands for a byte that is not part of valid UTF-8. No
// instruction matches it, which is how Rust's regex (and so ripgrep) treats
// such bytes in Unicode mode.
const invalidRune = -2

// vm is a leftmost-first Pike VM over a compiled syntax.Prog that only tracks
// where the match starts. It exists for the few lines where Go's regexp and
// ripgrep disagree (see matcher); it is slower than regexp but linear.
// A vm is not safe for concurrent use.
type vm struct {
	prog  *syntax.Prog
	clist threadList
	nlist threadList
}

type thread struct {
	pc    uint32
	start int
}

// threadList is a sparse set of program counters, kept in priority order.
type threadList struct {
	sparse []uint32
	dense  []thread
}

func (l *threadList) init(n int) {
	l.sparse = make([]uint32, n)
	l.dense = make([]thread, 0, n)
}

func (l *threadList) has(pc uint32) bool {
	i := l.sparse[pc]
	return int(i) < len(l.dense) && l.dense[i].pc == pc
}

func (l *threadList) add(pc uint32, start int) {
	l.sparse[pc] = uint32(len(l.dense))
	l.dense = append(l.dense, thread{pc: pc, start: start})
}

func newVM(prog *syntax.Prog) *vm {
	v := &vm{prog: prog}
	v.clist.init(len(prog.Inst))
	v.nlist.init(len(prog.Inst))
	return v
}

// decodeAt returns the rune at in[pos] and its width; -1 at the end of the
// input and invalidRune for a byte that does not start valid UTF-8.
func decodeAt(in []byte, pos int) (rune, int) {
	if pos >= len(in) {
		return -1, 0
	}
	if c := in[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	r, w := utf8.DecodeRune(in[pos:])
	if r == utf8.RuneError && w == 1 {
		return invalidRune, 1
	}
	return r, w
}

// emptyFlags computes the zero-width assertions that hold between before and
// after. The line is matched on its own, so line and text boundaries are the
// same thing (ripgrep also treats \A and \z per line without -U).
func emptyFlags(before, after rune) syntax.EmptyOp {
	var f syntax.EmptyOp
	if before == -1 {
		f |= syntax.EmptyBeginText | syntax.EmptyBeginLine
	}
	if after == -1 {
		f |= syntax.EmptyEndText | syntax.EmptyEndLine
	}
	if isWordRune(before) != isWordRune(after) {
		f |= syntax.EmptyWordBoundary
	} else {
		f |= syntax.EmptyNoWordBoundary
	}
	return f
}

// find returns the byte offset where the leftmost-first match starts.
func (v *vm) find(in []byte) (int, bool) {
	clist, nlist := &v.clist, &v.nlist
	clist.dense = clist.dense[:0]
	nlist.dense = nlist.dense[:0]
	matched := -1
	prev := rune(-1)
	pos := 0
	r, w := decodeAt(in, 0)
	for {
		if matched < 0 {
			// A new thread for a match starting here has the lowest priority.
			v.addThread(clist, uint32(v.prog.Start), pos, emptyFlags(prev, r))
		}
		if len(clist.dense) == 0 {
			break
		}
		nextPos := pos + w
		nr, nw := decodeAt(in, nextPos)
		nflag := emptyFlags(r, nr)
		for _, t := range clist.dense {
			in := &v.prog.Inst[t.pc]
			switch in.Op {
			case syntax.InstMatch:
				matched = t.start
				// Leftmost-first: threads after this one have lower priority.
				goto stepped
			case syntax.InstRune, syntax.InstRune1:
				if r >= 0 && in.MatchRune(r) {
					v.addThread(nlist, in.Out, t.start, nflag)
				}
			case syntax.InstRuneAny:
				if r >= 0 {
					v.addThread(nlist, in.Out, t.start, nflag)
				}
			case syntax.InstRuneAnyNotNL:
				if r >= 0 && r != '\n' {
					v.addThread(nlist, in.Out, t.start, nflag)
				}
			}
		}
	stepped:
		if pos >= len(in) {
			break
		}
		clist, nlist = nlist, clist
		nlist.dense = nlist.dense[:0]
		prev, r, w, pos = r, nr, nw, nextPos
	}
	return matched, matched >= 0
}

// addThread follows the empty transitions from pc and adds the threads that
// wait for input (or match) to l, in priority order.
func (v *vm) addThread(l *threadList, pc uint32, start int, flag syntax.EmptyOp) {
	if l.has(pc) {
		return
	}
	in := &v.prog.Inst[pc]
	switch in.Op {
	case syntax.InstFail:
		l.add(pc, start) // keeps the set consistent; never matches
	case syntax.InstAlt, syntax.InstAltMatch:
		l.add(pc, start)
		v.addThread(l, in.Out, start, flag)
		v.addThread(l, in.Arg, start, flag)
	case syntax.InstEmptyWidth:
		l.add(pc, start)
		if syntax.EmptyOp(in.Arg)&^flag == 0 {
			v.addThread(l, in.Out, start, flag)
		}
	case syntax.InstNop, syntax.InstCapture:
		l.add(pc, start)
		v.addThread(l, in.Out, start, flag)
	default: // InstMatch and rune instructions wait in the list
		l.add(pc, start)
	}
}
