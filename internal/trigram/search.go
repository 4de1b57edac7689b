package trigram

import (
	"bytes"
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/zoekt"
	"github.com/sourcegraph/zoekt/query"
)

// Query is a regex_search request.
type Query struct {
	// Pattern is a Go regexp (RE2 syntax; \d \w \s \b have ripgrep's
	// Unicode meaning), or a literal string when Literal is set.
	Pattern string
	Literal bool
	// CaseSensitive false is ripgrep's -i. Note the zero value is
	// case-insensitive; regex_search's default (true) is the caller's to set.
	CaseSensitive bool
	// PathPrefix limits the search to files under this directory (or to
	// this file), a clean path relative to the repository root.
	PathPrefix string
	// Include and Exclude are ripgrep globs (-g GLOB and -g !GLOB), relative
	// to the repository root; see glob for the exact rules.
	Include, Exclude []string
	// ContextLines is ripgrep's -C (0-10 in the tool).
	ContextLines int
	// MaxResults is how many matches are returned (default 100). Counting
	// goes on up to CountLimit.
	MaxResults int
	// CountLimit bounds the counting (default DefaultCountLimit, never
	// below MaxResults): once this many matches are found, no further file
	// is started, Result.CountLimited is set and TotalMatches is reported
	// as CountLimit.
	CountLimit int
}

// DefaultMaxResults and DefaultCountLimit are the Query defaults.
const (
	DefaultMaxResults = 100
	DefaultCountLimit = 100_000
)

// Match is one matching line, like one "match" message of rg --json.
type Match struct {
	Path string
	Line int // 1-based
	// Column is the 1-based byte column where the first match on the line
	// starts (rg --json's first submatch start + 1, rg --column).
	Column int
	// LineContent is the line without its terminator ("\n" or "\r\n").
	LineContent string
	// Before and After are context lines (see Search for which ones).
	Before, After []string
}

// Result is the outcome of Search.
type Result struct {
	// Matches are sorted by path (bytewise), then line.
	Matches []Match
	// TotalMatches counts matching lines (exact unless CountLimited).
	TotalMatches int
	// Truncated is TotalMatches > len(Matches) because of MaxResults.
	Truncated bool
	// CountLimited reports that the search stopped at Query.CountLimit:
	// there are at least TotalMatches matches.
	CountLimited bool
	// FilesSearched is the number of files whose content was scanned: those
	// in scope that the trigram prefilter could not rule out.
	FilesSearched int
}

// Search runs q over the index. Matching follows ripgrep (rg --no-config
// -uuu -a, i.e. nothing filtered by rg itself) run over a directory holding
// exactly the indexed files:
//   - matching is per line, without -U: a match never spans lines and a
//     pattern with a literal \n is rejected (ErrInvalidPattern);
//   - one Match per matching line; TotalMatches counts matching lines;
//   - a UTF-8 byte order mark at the start of a file is not part of line 1
//     (ripgrep strips it), so columns there count from after it;
//   - context lines are assigned the way rg prints them, each line once: a
//     non-matching line within ContextLines after a match is that match's
//     After, otherwise (within ContextLines before the next match) it is the
//     next match's Before; matching lines are never context.
//
// Known differences from ripgrep, all outside ordinary source text: UTF-16
// files with a BOM are searched as bytes (rg transcodes them), invalid UTF-8
// after a UTF-8 BOM is not replaced by U+FFFD, and the Unicode tables are Go's
// (15.0) rather than ripgrep's. The pattern syntax is Go's: constructs only
// Rust accepts ((?u), \p{Alphabetic}, [a-z&&[^aeiou]]) are errors or, for
// nested classes, mean something else; \Q...\E works here but not in rg.
//
// zoekt only narrows the candidate files: the regexp is reduced to
// substrings every match must contain (analyze.go), zoekt's trigram index
// finds the files containing them, and the matching itself is done here on
// the stored contents, line by line.
func (ix *Index) Search(ctx context.Context, q Query) (*Result, error) {
	m, err := compilePattern(q.Pattern, q.Literal, q.CaseSensitive)
	if err != nil {
		return nil, err
	}
	pf, err := newPathFilter(q.PathPrefix, q.Include, q.Exclude)
	if err != nil {
		return nil, err
	}
	if q.MaxResults <= 0 {
		q.MaxResults = DefaultMaxResults
	}
	if q.CountLimit <= 0 {
		q.CountLimit = DefaultCountLimit
	}
	// Stopping early is only deterministic if the files scanned before the
	// stop hold at least MaxResults matches.
	q.CountLimit = max(q.CountLimit, q.MaxResults)
	q.ContextLines = max(q.ContextLines, 0)

	cond := prefilter(m.syn)
	lits, haveLits := lineFilter(cond)

	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	res := &Result{}
	if cond.op == qFalse {
		return res, nil
	}
	cands, err := ix.candidates(ctx, cond, pf)
	if err != nil {
		return nil, err
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].path < cands[j].path })

	// Scan candidates in path order, so that once CountLimit is reached the
	// files not yet started all sort after every file that was scanned, and
	// the first MaxResults matches are the same on every run.
	perFile := make([]fileHits, len(cands))
	var (
		next    atomic.Int64
		total   atomic.Int64
		scanned atomic.Int64
		wg      sync.WaitGroup
	)
	keep := q.MaxResults + 1 // +1: the next match bounds the last one's After context
	nw := min(workers(), len(cands))
	for w := 0; w < nw; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newScanner(m, lits, haveLits)
			for {
				// Check the limit before taking a file, never after: the
				// scanned files must stay a prefix of cands.
				if total.Load() >= int64(q.CountLimit) || ctx.Err() != nil {
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(cands) {
					return
				}
				perFile[i] = sc.scan(text(cands[i].content), keep)
				perFile[i].done = true
				scanned.Add(1)
				total.Add(int64(perFile[i].count))
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	res.FilesSearched = int(scanned.Load())
	for i := range cands {
		fh := &perFile[i]
		if !fh.done {
			continue
		}
		res.TotalMatches += fh.count
		for j := range fh.hits {
			if len(res.Matches) >= q.MaxResults {
				break
			}
			res.Matches = append(res.Matches, makeMatch(cands[i], fh.hits, j, q.ContextLines))
		}
	}
	if res.FilesSearched < len(cands) {
		// Stopped at CountLimit. How far past it the count got depends on
		// timing, so report the limit itself.
		res.CountLimited = true
		res.TotalMatches = q.CountLimit
	}
	res.Truncated = res.TotalMatches > len(res.Matches)
	return res, nil
}

func workers() int { return runtime.GOMAXPROCS(0) }

// candidates returns the documents that may contain a match and pass the
// path filter.
func (ix *Index) candidates(ctx context.Context, cond *qnode, pf *pathFilter) ([]doc, error) {
	var (
		mu  sync.Mutex
		out []doc
	)
	add := func(ds []doc) {
		mu.Lock()
		out = append(out, ds...)
		mu.Unlock()
	}
	filter := func(sh *shard, ds []doc) []doc {
		ds = sh.visible(ds)
		if pf.all() {
			return ds
		}
		var kept []doc
		for _, d := range ds {
			if pf.allowed(d.path) {
				kept = append(kept, d)
			}
		}
		return kept
	}
	var zq query.Q
	if cond.op != qTrue {
		// type:filename makes zoekt report only which files match, skipping
		// the per-match line extraction and scoring it would otherwise do.
		zq = &query.Type{Type: query.TypeFileName, Child: toZoekt(cond)}
	}
	err := ix.eachShard(ctx, func(sh *shard) error {
		// Documents with NUL bytes are not in zoekt; always scan them.
		add(filter(sh, sh.raw))
		if zq == nil {
			add(filter(sh, sh.docs))
			return nil
		}
		res, err := sh.searcher.Search(ctx, zq, &zoekt.SearchOptions{ShardMaxMatchCount: 1 << 30})
		if err != nil {
			return err
		}
		ds := make([]doc, 0, len(res.Files))
		for _, fm := range res.Files {
			if i, ok := sh.byName[fm.FileName]; ok {
				ds = append(ds, sh.docs[i])
			}
		}
		add(filter(sh, ds))
		return nil
	})
	return out, err
}

var utf8BOM = []byte("\xef\xbb\xbf")

// text is the searchable text of a document: ripgrep strips a UTF-8 BOM.
func text(content []byte) []byte {
	if bytes.HasPrefix(content, utf8BOM) {
		return content[len(utf8BOM):]
	}
	return content
}

// lineHit is a matching line: its number, its start offset in the text
// and the 0-based byte offset of the match in the line.
type lineHit struct {
	line, start, col int
}

type fileHits struct {
	done  bool
	count int
	hits  []lineHit // the first keep matching lines
}

// scanner finds matching lines in one text. Each search worker has its own.
type scanner struct {
	m        *matcher
	lits     []lineLit
	haveLits bool
	anyFold  bool
	vm       *vm
	dfa      *dfa
	noDFA    bool // tests: check every line with the regexp
	lower    []byte
	starts   []int
}

func newScanner(m *matcher, lits []lineLit, haveLits bool) *scanner {
	sc := &scanner{m: m, lits: lits, haveLits: haveLits}
	for _, l := range lits {
		sc.anyFold = sc.anyFold || l.fold
	}
	return sc
}

func (sc *scanner) firstMatch(line []byte) (int, bool) {
	if sc.m.needsVM(line) {
		if sc.vm == nil {
			sc.vm = newVM(sc.m.prog)
		}
		return sc.vm.find(line)
	}
	loc := sc.m.re.FindIndex(line)
	if loc == nil {
		return 0, false
	}
	return loc[0], true
}

// scan returns the number of matching lines of t and the first keep of them.
func (sc *scanner) scan(t []byte, keep int) fileHits {
	var fh fileHits
	check := func(lineNo, start, end int) {
		col, ok := sc.firstMatch(t[start:end])
		if !ok {
			return
		}
		fh.count++
		if len(fh.hits) < keep {
			fh.hits = append(fh.hits, lineHit{line: lineNo, start: start, col: col})
		}
	}
	if !sc.haveLits {
		// No literal to look for: let the DFA find the matching lines.
		if sc.dfa == nil && !sc.noDFA {
			sc.dfa = newDFA(sc.m.prog)
		}
		if sc.dfa != nil && !sc.dfa.failed {
			ok := sc.dfa.scanLines(t, func(lineNo, start, end int) {
				if len(fh.hits) >= keep {
					fh.count++ // the DFA decided; the column is not needed
					return
				}
				check(lineNo, start, end)
			})
			if ok {
				return fh
			}
			fh = fileHits{} // the automaton grew too large; start over
		}
		lineNo := 1
		for start := 0; start < len(t); lineNo++ {
			end := bytes.IndexByte(t[start:], '\n')
			if end < 0 {
				end = len(t)
			} else {
				end += start
			}
			check(lineNo, start, end)
			start = end + 1
		}
		return fh
	}
	// Only lines containing one of the literals can match.
	starts := sc.candidateLines(t)
	lineNo, counted := 1, 0
	for _, start := range starts {
		lineNo += bytes.Count(t[counted:start], []byte{'\n'})
		counted = start
		end := bytes.IndexByte(t[start:], '\n')
		if end < 0 {
			end = len(t)
		} else {
			end += start
		}
		check(lineNo, start, end)
	}
	return fh
}

// candidateLines returns the sorted start offsets of the lines of t that
// contain one of the scanner's literals.
func (sc *scanner) candidateLines(t []byte) []int {
	folded := t
	if sc.anyFold {
		sc.lower = asciiLower(sc.lower, t)
		folded = sc.lower
	}
	starts := sc.starts[:0]
	for _, l := range sc.lits {
		hay := t
		if l.fold {
			hay = folded
		}
		for pos := 0; pos < len(hay); {
			i := bytes.Index(hay[pos:], l.s)
			if i < 0 {
				break
			}
			i += pos
			start := bytes.LastIndexByte(hay[:i], '\n') + 1
			starts = append(starts, start)
			end := bytes.IndexByte(hay[i:], '\n')
			if end < 0 {
				break
			}
			pos = i + end + 1
		}
	}
	if len(sc.lits) > 1 {
		sort.Ints(starts)
		starts = compactInts(starts)
	}
	sc.starts = starts
	return starts
}

func compactInts(s []int) []int {
	if len(s) == 0 {
		return s
	}
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

// makeMatch builds the j-th match of a file, with context lines.
func makeMatch(d doc, hits []lineHit, j, n int) Match {
	t := text(d.content)
	h := hits[j]
	end := lineEnd(t, h.start)
	mt := Match{Path: d.path, Line: h.line, Column: h.col + 1, LineContent: lineString(t[h.start:end])}
	if n == 0 {
		return mt
	}
	// Before: up to n lines, not reaching back into the previous match or
	// the lines already printed as its After context.
	first := max(h.line-n, 1)
	if j > 0 {
		first = max(first, hits[j-1].line+n+1)
	}
	var before []string
	pos := h.start
	for l := h.line - 1; l >= first; l-- {
		s := bytes.LastIndexByte(t[:pos-1], '\n') + 1
		before = append(before, lineString(t[s:pos-1]))
		pos = s
	}
	for i, k := 0, len(before)-1; i < k; i, k = i+1, k-1 {
		before[i], before[k] = before[k], before[i]
	}
	mt.Before = before
	// After: up to n lines, stopping before the next match.
	last := h.line + n
	if j+1 < len(hits) {
		last = min(last, hits[j+1].line-1)
	}
	pos = end + 1
	for l := h.line + 1; l <= last && pos < len(t); l++ {
		e := lineEnd(t, pos)
		mt.After = append(mt.After, lineString(t[pos:e]))
		pos = e + 1
	}
	return mt
}

func lineEnd(t []byte, start int) int {
	if i := bytes.IndexByte(t[start:], '\n'); i >= 0 {
		return start + i
	}
	return len(t)
}

func lineString(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return string(b)
}
