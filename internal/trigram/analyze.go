package trigram

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sourcegraph/zoekt/query"
)

// This file derives, from a parsed regexp, a boolean query over substrings
// that every matching line must satisfy. zoekt evaluates that query against
// its trigram index to pick candidate files, and the same substrings pick
// candidate lines inside a file before the real regexp runs.
//
// The analysis is the classic one from Google Code Search (Russ Cox,
// "Regular Expression Matching with a Trigram Index"): each subexpression is
// summarised by the set of strings it can match exactly (when small), or by
// sets of possible prefixes and suffixes plus a necessary condition. It must
// never produce a condition that a real match could violate, so whenever a
// set grows too large it is widened (truncated, or replaced by "anything").

// lit is a string, compared case-sensitively or with Unicode simple case
// folding (fold).
type lit struct {
	s    string
	fold bool
}

// litSet is a set of strings. A nil litSet means "unknown"; an empty non-nil
// one means "nothing can match".
type litSet []lit

const (
	// maxSet bounds every exact/prefix/suffix set.
	maxSet = 16
	// maxClassRunes: larger character classes are treated like '.'.
	maxClassRunes = 64
	// trimRunes is how much of a prefix/suffix is kept when a set must shrink.
	trimRunes = 4
)

var emptyStrSet = litSet{{}}

type qop uint8

const (
	qTrue qop = iota
	qFalse
	qAtom
	qAnd
	qOr
)

// qnode is a boolean condition over substrings ("the line contains atom").
type qnode struct {
	op   qop
	atom lit
	kids []*qnode
}

var (
	qtrue  = &qnode{op: qTrue}
	qfalse = &qnode{op: qFalse}
)

func qand(ns ...*qnode) *qnode {
	var kids []*qnode
	for _, n := range ns {
		switch n.op {
		case qTrue:
		case qFalse:
			return qfalse
		case qAnd:
			kids = append(kids, n.kids...)
		default:
			kids = append(kids, n)
		}
	}
	kids = dropImplied(dedupe(kids), true)
	switch len(kids) {
	case 0:
		return qtrue
	case 1:
		return kids[0]
	}
	return &qnode{op: qAnd, kids: kids}
}

// dropImplied simplifies atom siblings where one contains the other
// (containing "errors.New(" implies containing "errors."): in an AND the
// shorter atom is redundant, in an OR the longer one.
func dropImplied(kids []*qnode, and bool) []*qnode {
	implies := func(long, short lit) bool {
		if long.fold && !short.fold {
			return false
		}
		if long.fold {
			return strings.Contains(strings.ToLower(long.s), strings.ToLower(short.s))
		}
		return strings.Contains(long.s, short.s)
	}
	out := kids[:0:0]
	for i, k := range kids {
		redundant := false
		for j, o := range kids {
			if i == j || k.op != qAtom || o.op != qAtom {
				continue
			}
			if and && implies(o.atom, k.atom) || !and && implies(k.atom, o.atom) {
				redundant = true
				break
			}
		}
		if !redundant {
			out = append(out, k)
		}
	}
	return out
}

// dedupe drops repeated conditions (concatenations often derive the same
// one twice), keeping the first.
func dedupe(kids []*qnode) []*qnode {
	if len(kids) < 2 {
		return kids
	}
	seen := make(map[string]bool, len(kids))
	out := kids[:0]
	for _, k := range kids {
		s := k.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, k)
		}
	}
	return out
}

func qor(ns ...*qnode) *qnode {
	var kids []*qnode
	for _, n := range ns {
		switch n.op {
		case qFalse:
		case qTrue:
			return qtrue
		case qOr:
			kids = append(kids, n.kids...)
		default:
			kids = append(kids, n)
		}
	}
	kids = dropImplied(dedupe(kids), false)
	switch len(kids) {
	case 0:
		return qfalse
	case 1:
		return kids[0]
	}
	return &qnode{op: qOr, kids: kids}
}

func (n *qnode) String() string {
	switch n.op {
	case qTrue:
		return "true"
	case qFalse:
		return "false"
	case qAtom:
		if n.atom.fold {
			return "i" + strconvQuote(n.atom.s)
		}
		return strconvQuote(n.atom.s)
	}
	parts := make([]string, len(n.kids))
	for i, k := range n.kids {
		parts[i] = k.String()
	}
	sep := " "
	if n.op == qOr {
		sep = "|"
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// foldVariants returns the distinct values of unicode.ToLower over the
// case orbit of r. zoekt finds case-insensitive candidates through every
// simple-fold variant of each trigram, but then verifies a candidate by
// comparing unicode.ToLower of text and pattern runes, which misses variants
// such as U+017F (ſ) for 's' or U+03C2 (ς) for 'σ' that Go's (and
// ripgrep's) (?i) accept. Such runes need one zoekt substring per variant.
func foldVariants(r rune) []rune {
	vs := []rune{unicode.ToLower(r)}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if l := unicode.ToLower(f); !slices.Contains(vs, l) {
			vs = append(vs, l)
		}
	}
	return vs
}

// hasCase reports whether r has case variants.
func hasCase(r rune) bool { return unicode.SimpleFold(r) != r }

// maxFoldVariants bounds the spellings one case-insensitive atom expands to.
const maxFoldVariants = 8

// atomFor returns the condition "the text contains l" in a form zoekt can
// evaluate with its index: substrings shorter than a trigram cannot use the
// index (zoekt would scan every document), so they become "true".
func atomFor(l lit) *qnode {
	if utf8.RuneCountInString(l.s) < 3 {
		return qtrue
	}
	if !l.fold {
		return &qnode{op: qAtom, atom: l}
	}
	// Spell out the runes zoekt's ToLower check cannot equate (see
	// foldVariants); each spelling is still searched case-insensitively.
	// When the whole literal has too many spellings, use its longest run
	// of runes that does not.
	rs := []rune(l.s)
	vars := make([][]rune, len(rs))
	for i, r := range rs {
		vars[i] = foldVariants(r)
	}
	bestLo, bestHi := 0, 0
	for lo, hi, prod := 0, 0, 1; hi < len(rs); hi++ {
		prod *= len(vars[hi])
		for prod > maxFoldVariants {
			prod /= len(vars[lo])
			lo++
		}
		if hi+1-lo > bestHi-bestLo {
			bestLo, bestHi = lo, hi+1
		}
	}
	if bestHi-bestLo < 3 {
		return qtrue
	}
	spellings := []string{""}
	cased := false
	for i := bestLo; i < bestHi; i++ {
		cased = cased || hasCase(rs[i])
		var next []string
		for _, sp := range spellings {
			for _, v := range vars[i] {
				next = append(next, sp+string(v))
			}
		}
		spellings = next
	}
	ns := make([]*qnode, len(spellings))
	for i, sp := range spellings {
		ns[i] = &qnode{op: qAtom, atom: lit{s: sp, fold: cased}}
	}
	return qor(ns...)
}

func anyOf(set litSet) *qnode {
	if set == nil {
		return qtrue
	}
	ns := make([]*qnode, 0, len(set))
	for _, l := range set {
		if l.s == "" {
			return qtrue
		}
		ns = append(ns, atomFor(l))
	}
	return qor(ns...)
}

// normalize sorts and de-duplicates a set; a string present both
// case-sensitively and folded keeps the folded (wider) form.
func normalize(set litSet) litSet {
	if len(set) <= 1 {
		return set
	}
	sort.Slice(set, func(i, j int) bool {
		if set[i].s != set[j].s {
			return set[i].s < set[j].s
		}
		return set[i].fold && !set[j].fold
	})
	out := set[:1]
	for _, l := range set[1:] {
		if l.s != out[len(out)-1].s {
			out = append(out, l)
		}
	}
	return out
}

func union(a, b litSet) litSet {
	out := make(litSet, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	return normalize(out)
}

func cross(a, b litSet) litSet {
	out := make(litSet, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, lit{s: x.s + y.s, fold: x.fold || y.fold})
		}
	}
	return normalize(out)
}

// trim keeps a prefix (or suffix) set within maxSet by shortening its
// strings, which keeps it valid: a shorter prefix of a prefix is a prefix.
func trim(set litSet, suffix bool) litSet {
	if len(set) <= maxSet {
		return set
	}
	out := make(litSet, len(set))
	for i, l := range set {
		s := l.s
		if n := utf8.RuneCountInString(s); n > trimRunes {
			if suffix {
				for j := 0; j < n-trimRunes; j++ {
					_, w := utf8.DecodeRuneInString(s)
					s = s[w:]
				}
			} else {
				end := 0
				for j := 0; j < trimRunes; j++ {
					_, w := utf8.DecodeRuneInString(s[end:])
					end += w
				}
				s = s[:end]
			}
		}
		out[i] = lit{s: s, fold: l.fold}
	}
	out = normalize(out)
	if len(out) > maxSet {
		return emptyStrSet
	}
	return out
}

// info summarises what a subexpression can match.
type info struct {
	canEmpty bool
	// exact, when non-nil, holds every string the expression can match.
	exact litSet
	// prefix and suffix (used when exact is nil) hold strings one of which
	// starts (ends) every match.
	prefix, suffix litSet
	// match is a condition every match satisfies.
	match *qnode
}

func exactInfo(set litSet) info {
	can := false
	for _, l := range set {
		can = can || l.s == ""
	}
	return info{canEmpty: can, exact: set, match: qtrue}
}

var (
	anyCharInfo = info{prefix: emptyStrSet, suffix: emptyStrSet, match: qtrue}
	starInfo    = info{canEmpty: true, prefix: emptyStrSet, suffix: emptyStrSet, match: qtrue}
)

func (x info) pre() litSet {
	if x.exact != nil {
		return x.exact
	}
	return x.prefix
}

func (x info) suf() litSet {
	if x.exact != nil {
		return x.exact
	}
	return x.suffix
}

// full is the strongest condition the summary implies.
func (x info) full() *qnode {
	if x.exact != nil {
		return qand(x.match, anyOf(x.exact))
	}
	return qand(x.match, anyOf(x.prefix), anyOf(x.suffix))
}

func concat(x, y info) info {
	if x.exact != nil && y.exact != nil && len(x.exact)*len(y.exact) <= maxSet {
		return info{canEmpty: x.canEmpty && y.canEmpty, exact: cross(x.exact, y.exact), match: qand(x.match, y.match)}
	}
	res := info{canEmpty: x.canEmpty && y.canEmpty}
	sx, py := x.suf(), y.pre()
	// A match is s1+s2: s1 ends with one of sx and s2 starts with one of py,
	// so the match contains one of their concatenations.
	if len(sx)*len(py) <= maxSet {
		res.match = qand(x.match, y.match, anyOf(cross(sx, py)))
	} else {
		res.match = qand(x.match, y.match, anyOf(sx), anyOf(py))
	}
	switch {
	case x.exact != nil && len(x.exact)*len(py) <= maxSet:
		res.prefix = cross(x.exact, py)
	case x.exact != nil:
		res.prefix = x.exact
	case x.canEmpty:
		res.prefix = union(x.prefix, py)
	default:
		res.prefix = x.prefix
	}
	switch {
	case y.exact != nil && len(sx)*len(y.exact) <= maxSet:
		res.suffix = cross(sx, y.exact)
	case y.exact != nil:
		res.suffix = y.exact
	case y.canEmpty:
		res.suffix = union(y.suffix, sx)
	default:
		res.suffix = y.suffix
	}
	res.prefix, res.suffix = trim(res.prefix, false), trim(res.suffix, true)
	return res
}

func alternate(x, y info) info {
	if x.exact != nil && y.exact != nil && len(x.exact)+len(y.exact) <= maxSet {
		res := exactInfo(union(x.exact, y.exact))
		res.match = qor(x.match, y.match)
		return res
	}
	return info{
		canEmpty: x.canEmpty || y.canEmpty,
		prefix:   trim(union(x.pre(), y.pre()), false),
		suffix:   trim(union(x.suf(), y.suf()), true),
		match:    qor(x.full(), y.full()),
	}
}

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return exactInfo(litSet{})
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText,
		syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo(litSet{{}})
	case syntax.OpLiteral:
		fold := false
		if re.Flags&syntax.FoldCase != 0 {
			for _, r := range re.Rune {
				fold = fold || hasCase(r)
			}
		}
		return exactInfo(litSet{{s: string(re.Rune), fold: fold}})
	case syntax.OpCharClass:
		return classInfo(re.Rune)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return anyCharInfo
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpStar:
		return starInfo
	case syntax.OpQuest:
		return quest(analyze(re.Sub[0]))
	case syntax.OpPlus:
		x := analyze(re.Sub[0])
		return info{canEmpty: x.canEmpty, prefix: x.pre(), suffix: x.suf(), match: x.full()}
	case syntax.OpRepeat:
		x := analyze(re.Sub[0])
		if re.Min == 0 {
			if re.Max == 1 {
				return quest(x)
			}
			return starInfo
		}
		// Only the first few mandatory copies are worth describing; the rest
		// is summarised as "anything", which is wider and so still valid.
		k := min(re.Min, 3)
		res := x
		for i := 1; i < k; i++ {
			res = concat(res, x)
		}
		if re.Max == -1 || re.Max > k {
			res = concat(res, starInfo)
		}
		return res
	case syntax.OpConcat:
		res := exactInfo(litSet{{}})
		for _, s := range re.Sub {
			res = concat(res, analyze(s))
		}
		return res
	case syntax.OpAlternate:
		res := analyze(re.Sub[0])
		for _, s := range re.Sub[1:] {
			res = alternate(res, analyze(s))
		}
		return res
	}
	return anyCharInfo
}

func quest(x info) info {
	if x.exact != nil && len(x.exact)+1 <= maxSet {
		return exactInfo(union(x.exact, litSet{{}}))
	}
	return starInfo
}

// classInfo describes a character class as a small set of one-rune strings.
// A class that is closed under case folding (what (?i)[a-c] parses to) is
// described by folded strings, one per case orbit, so that concatenations
// do not multiply out every case combination.
func classInfo(ranges []rune) info {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > maxClassRunes+1 { // +1: '\n' is dropped below
			return anyCharInfo
		}
	}
	in := func(r rune) bool {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= r && r <= ranges[i+1] {
				return true
			}
		}
		return false
	}
	done := map[rune]bool{}
	set := litSet{}
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			// A line never contains '\n', so it is not a possible match.
			if r == '\n' || done[r] {
				continue
			}
			closed, lo := true, r
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				closed = closed && in(f)
				lo = min(lo, f)
			}
			if closed && hasCase(r) {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					done[f] = true
				}
				done[r] = true
				set = append(set, lit{s: string(lo), fold: true})
				continue
			}
			done[r] = true
			set = append(set, lit{s: string(r)})
		}
	}
	if len(set) > maxSet {
		return anyCharInfo
	}
	return exactInfo(normalize(set))
}

// prefilter returns the condition every matching line satisfies.
func prefilter(re *syntax.Regexp) *qnode {
	return analyze(re).full()
}

// toZoekt converts a condition (not qTrue/qFalse) into a zoekt query.
func toZoekt(n *qnode) query.Q {
	switch n.op {
	case qAtom:
		return &query.Substring{Pattern: n.atom.s, CaseSensitive: !n.atom.fold, Content: true}
	case qAnd, qOr:
		kids := make([]query.Q, len(n.kids))
		for i, k := range n.kids {
			kids[i] = toZoekt(k)
		}
		if n.op == qAnd {
			return query.NewAnd(kids...)
		}
		return query.NewOr(kids...)
	case qFalse:
		return &query.Const{Value: false}
	}
	return &query.Const{Value: true}
}

// lineLit is a byte string to look for in a file to find candidate lines.
// When fold is set, s is ASCII-lowercased and must be searched in the
// ASCII-lowercased text.
type lineLit struct {
	s    []byte
	fold bool
}

// asciiFoldable reports whether r can be found case-insensitively by
// lowercasing ASCII only: an ASCII rune whose case variants are all ASCII
// (not k or s, which fold to U+212A and U+017F), or a rune without case.
func asciiFoldable(r rune) bool {
	if r < utf8.RuneSelf {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf {
				return false
			}
		}
		return true
	}
	return !hasCase(r)
}

func asciiLower(dst, src []byte) []byte {
	dst = append(dst[:0], src...)
	for i, c := range dst {
		if 'A' <= c && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// lineFilter picks, from a condition, a set of literals one of which every
// matching line contains. ok is false when no such set is known.
func lineFilter(n *qnode) (lits []lineLit, ok bool) {
	switch n.op {
	case qFalse:
		return nil, true
	case qTrue:
		return nil, false
	case qAtom:
		if !n.atom.fold {
			return []lineLit{{s: []byte(n.atom.s)}}, true
		}
		// Longest run of runes that ASCII lowercasing handles.
		best, start := "", 0
		for i, r := range n.atom.s + "\x00" {
			if r == 0 || !asciiFoldable(r) {
				if p := n.atom.s[start:i]; len(p) > len(best) {
					best = p
				}
				start = i + utf8.RuneLen(r)
			}
		}
		if best == "" {
			return nil, false
		}
		return []lineLit{{s: asciiLower(nil, []byte(best)), fold: true}}, true
	case qOr:
		seen := map[string]bool{}
		for _, k := range n.kids {
			kl, kok := lineFilter(k)
			if !kok {
				return nil, false
			}
			for _, l := range kl {
				if key := fmt.Sprint(l.fold, string(l.s)); !seen[key] {
					seen[key] = true
					lits = append(lits, l)
				}
			}
		}
		return lits, true
	case qAnd:
		bestScore := -1
		for _, k := range n.kids {
			kl, kok := lineFilter(k)
			if !kok {
				continue
			}
			// Prefer the alternative whose shortest literal is longest, then
			// the one with fewer literals.
			score := 1 << 20
			for _, l := range kl {
				score = min(score, len(l.s))
			}
			score = score*64 - min(len(kl), 63)
			if score > bestScore {
				bestScore, lits, ok = score, kl, true
			}
		}
		return lits, ok
	}
	return nil, false
}
