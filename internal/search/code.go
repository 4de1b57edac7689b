package search

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cidx/cidx/internal/codetok"
	"github.com/cidx/cidx/internal/embed"
	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/trigram"
)

// CodeQuery is a search_code request.
type CodeQuery struct {
	Text     string
	Aliases  []string
	Multi    bool
	Limit    int
	MinScore float64
	Mode     string // semantic (default), fts, hybrid
	FilterSpec
	CaseSensitive bool
	Fuzzy         bool
	EditDistance  int
	SnippetLines  int // context lines around an fts match; negative means 5
	Regex         bool
	Aggregation   string // global (default) or per_repo
	// ExcludeRepos are regular expressions: in a multi-repository search,
	// repositories whose alias matches one are not searched.
	ExcludeRepos []string
	// VectorWeight overrides the vector ranking's weight in hybrid fusion
	// (0: DefaultVectorWeight). Not a tool parameter: for evaluations.
	VectorWeight float64
}

// CodeHit is one result.
type CodeHit struct {
	FilePath        string  `json:"file_path"`
	LineNumber      int     `json:"line_number" jsonschema:"match line (fts, regex) or chunk start line (semantic)"`
	StartLine       int     `json:"start_line"`
	EndLine         int     `json:"end_line"`
	CodeSnippet     string  `json:"code_snippet"`
	SimilarityScore float64 `json:"similarity_score" jsonschema:"0-1, higher is better"`
	RepositoryAlias string  `json:"repository_alias"`
	SourceRepo      *string `json:"source_repo"`
	ChunkID         string  `json:"chunk_id,omitempty" jsonschema:"pass to get_file_chunk"`
	Language        string  `json:"language,omitempty"`
	Symbol          string  `json:"symbol,omitempty"`
	Commit          string  `json:"commit"`
}

// CodeResult is a search_code answer.
type CodeResult struct {
	Hits       []CodeHit
	Repos      []RepoInfo
	Errors     map[string]string
	ElapsedMS  float64
	Searched   int
	TotalFound int
}

const rrfK = 60

// DefaultVectorWeight is the weight of the vector ranking in hybrid
// fusion: plain reciprocal-rank fusion. Measured with bench/search
// -hybrid-weights on 500 Go doc-comment queries and 300 zoekt commit
// subjects, weights 0.75 and 1 beat both BM25 and vectors on MRR@10 and
// Recall@10 of both sets; 1 is best on the doc-comment set. (Weight 3 was
// right for the FTS5 ranking, cut to 6 terms; with every query term scored
// BM25 got stronger, and weight 3 lost to it on commit subjects.)
const DefaultVectorWeight = 1.0

// Code runs search_code.
func (s *Service) Code(ctx context.Context, q CodeQuery) (*CodeResult, error) {
	start := time.Now()
	if strings.TrimSpace(q.Text) == "" {
		return nil, &Error{Message: "Query text cannot be empty", Hint: "describe what you look for, e.g. \"retry failed HTTP requests\""}
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, 100)
	if q.Mode == "" {
		q.Mode = "semantic"
	}
	if q.SnippetLines < 0 {
		q.SnippetLines = 5
	}
	if q.Regex && (q.Fuzzy || q.EditDistance > 0) {
		return nil, &Error{Message: "regex cannot be combined with fuzzy or edit_distance", Hint: "drop one of them"}
	}
	if q.Fuzzy && q.EditDistance == 0 {
		q.EditDistance = 1
	}
	if q.Regex && q.Mode != "fts" {
		return nil, &Error{Message: "regex=true needs search_mode=fts", Hint: "or use regex_search"}
	}
	var exclude []*regexp.Regexp
	for _, p := range q.ExcludeRepos {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, &Error{Message: fmt.Sprintf("exclude_patterns: %q is not a valid regular expression: %v", p, err), Hint: `patterns match repository aliases, e.g. "^legacy-" or "-test-global$"`}
		}
		exclude = append(exclude, re)
	}
	ts, errs, err := s.open(ctx, q.Aliases, q.Multi, exclude...)
	if err != nil {
		return nil, err
	}
	defer release(ts)
	f := newFilter(q.FilterSpec)
	// Embed the query once for every repository whose index used the
	// current embedder.
	var qvec []float32
	var qerr error
	if q.Mode != "fts" {
		vs, err := s.idx.Embedder().Embed(ctx, []string{q.Text}, embed.Query)
		if err != nil {
			qerr = err
		} else {
			qvec = vs[0]
		}
	}
	type repoHits struct {
		info RepoInfo
		hits []CodeHit
	}
	per := fanOut(ts, errs, func(t *target) (repoHits, error) {
		info := RepoInfo{Alias: t.alias, Commit: t.reader.Commit, Head: t.head, Stale: t.reader.Commit != t.head, VectorsReady: t.reader.VectorsReady, EffectiveMode: q.Mode}
		mode := q.Mode
		if mode != "fts" && (!t.reader.VectorsReady || qvec == nil || t.reader.Embedder != s.idx.Embedder().ID()) {
			switch {
			case qerr != nil:
				info.Note = "the query could not be embedded (" + qerr.Error() + "); lexical (fts) results"
			case !t.reader.VectorsReady:
				info.Note = "vectors are still being built; lexical (fts) results"
			default:
				info.Note = "the index was embedded with " + t.reader.Embedder + ", not the configured embedder; lexical (fts) results until it is reindexed"
			}
			mode = "fts"
			info.EffectiveMode = "fts"
		}
		hits, err := s.searchOne(ctx, t, q, mode, qvec, f)
		if err != nil {
			return repoHits{}, err
		}
		return repoHits{info: info, hits: hits}, nil
	})
	res := &CodeResult{Errors: errs, Searched: len(per)}
	var all [][]CodeHit
	for _, p := range per {
		res.Repos = append(res.Repos, p.info)
		all = append(all, p.hits)
		res.TotalFound += len(p.hits)
	}
	res.Hits = merge(all, q.Limit, q.Aggregation)
	if res.Hits == nil {
		res.Hits = []CodeHit{}
	}
	res.ElapsedMS = since(start)
	return res, nil
}

// merge combines per-repository results: global sorts everything by score;
// per_repo gives each repository an equal share of the limit.
func merge(per [][]CodeHit, limit int, mode string) []CodeHit {
	var out []CodeHit
	if mode == "per_repo" && len(per) > 0 {
		share, extra := limit/len(per), limit%len(per)
		for i, hits := range per {
			n := share
			if i < extra {
				n++
			}
			out = append(out, hits[:min(n, len(hits))]...)
		}
		return out
	}
	for _, hits := range per {
		out = append(out, hits...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SimilarityScore > out[j].SimilarityScore })
	return out[:min(limit, len(out))]
}

func (s *Service) searchOne(ctx context.Context, t *target, q CodeQuery, mode string, qvec []float32, f *filter) ([]CodeHit, error) {
	keep := f.keepFunc()
	if q.Regex {
		return s.regexHits(ctx, t, q, f)
	}
	text := q.Text
	if q.EditDistance > 0 {
		expanded, err := s.fuzzyTerms(ctx, t, q.Text, q.EditDistance)
		if err != nil {
			return nil, err
		}
		text = strings.Join(expanded, " ")
	}
	n := q.Limit
	if q.CaseSensitive {
		n *= 5 // some candidates will fail the exact-case check
	}
	var ranked []index.Hit
	switch mode {
	case "fts":
		hits, _, err := t.lexical(ctx, q.Text, text, n, keep)
		if err != nil {
			return nil, err
		}
		ranked = normalizeTop(hits)
	case "semantic":
		hits, err := t.reader.Nearest(qvec, n, keep)
		if err != nil {
			return nil, err
		}
		ranked = hits
	case "hybrid":
		depth := max(50, 3*n)
		lex, defs, err := t.lexical(ctx, q.Text, text, depth, keep)
		if err != nil {
			return nil, err
		}
		vec, err := t.reader.Nearest(qvec, depth, keep)
		if err != nil {
			return nil, err
		}
		w := q.VectorWeight
		if w <= 0 {
			w = DefaultVectorWeight
		}
		// Fuse everything, then cut: a definition of an identifier query
		// that fusion ranks below n still comes first.
		ranked = definitionsFirst(rrf(len(lex)+len(vec), lex, vec, w), defs)
		ranked = ranked[:min(n, len(ranked))]
	default:
		return nil, &Error{Message: fmt.Sprintf("unknown search_mode %q", mode), Hint: "use semantic, fts or hybrid"}
	}
	return s.materialize(ctx, t, q, mode, ranked)
}

// definitionDepth is how many BM25 hits are checked for definitions of an
// identifier query.
const definitionDepth = 100

// identRE is an identifier, possibly qualified: ReadFull, Reader.Read,
// parse_args.
var identRE = regexp.MustCompile(`^[\pL_][\pL\pN_]*(\.[\pL_][\pL\pN_]*)*$`)

// lexical ranks chunks by BM25. When the query is one identifier, the
// chunks that define it (index.Reader.Defining) come first, with the best
// hit's score: someone who types a name most often wants its definition,
// and BM25 alone ranks every chunk that mentions the name's words next to
// it.
// It also returns the definitions' rowids (nil for other queries).
func (t *target) lexical(ctx context.Context, query, text string, n int, keep index.Keep) ([]index.Hit, map[int64]bool, error) {
	ident := strings.TrimSpace(query)
	if !identRE.MatchString(ident) {
		hits, err := t.reader.BM25(ctx, text, n, keep)
		return hits, nil, err
	}
	hits, err := t.reader.BM25(ctx, text, max(n, definitionDepth), keep)
	if err != nil || len(hits) == 0 {
		return hits, nil, err
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.Rowid
	}
	defs, err := t.reader.Defining(ctx, ids, ident)
	if err != nil {
		return nil, nil, err
	}
	hits = definitionsFirst(hits, defs)
	return hits[:min(n, len(hits))], defs, nil
}

// definitionsFirst moves the hits in defs ahead of the others, keeping
// each group's order, and gives them at least the best hit's score so that
// scores still fall down the list.
func definitionsFirst(hits []index.Hit, defs map[int64]bool) []index.Hit {
	if len(defs) == 0 || len(hits) == 0 {
		return hits
	}
	top := hits[0].Score
	out := make([]index.Hit, 0, len(hits))
	for _, h := range hits {
		if defs[h.Rowid] {
			h.Score = max(h.Score, top)
			out = append(out, h)
		}
	}
	for _, h := range hits {
		if !defs[h.Rowid] {
			out = append(out, h)
		}
	}
	return out
}

// normalizeTop scales BM25 scores to 0-1 relative to the best hit.
func normalizeTop(hits []index.Hit) []index.Hit {
	if len(hits) == 0 || hits[0].Score <= 0 {
		return hits
	}
	top := hits[0].Score
	for i := range hits {
		hits[i].Score /= top
	}
	return hits
}

// rrf fuses a lexical and a vector ranking by weighted reciprocal rank
// (k=60), scaled so that a chunk ranked first by both scores 1.
func rrf(n int, lex, vec []index.Hit, vectorWeight float64) []index.Hit {
	score := map[int64]float64{}
	for r, h := range lex {
		score[h.Rowid] += 1 / float64(rrfK+r+1)
	}
	for r, h := range vec {
		score[h.Rowid] += vectorWeight / float64(rrfK+r+1)
	}
	out := make([]index.Hit, 0, len(score))
	for id, s := range score {
		out = append(out, index.Hit{Rowid: id, Score: s * float64(rrfK+1) / (1 + vectorWeight)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Rowid < out[j].Rowid
	})
	return out[:min(n, len(out))]
}

// materialize turns ranked chunks into hits with snippets.
func (s *Service) materialize(ctx context.Context, t *target, q CodeQuery, mode string, ranked []index.Hit) ([]CodeHit, error) {
	ids := make([]int64, len(ranked))
	for i, h := range ranked {
		ids[i] = h.Rowid
	}
	infos, err := t.reader.Chunks(ctx, ids)
	if err != nil {
		return nil, err
	}
	terms := codetok.Terms(q.Text)
	var out []CodeHit
	for _, h := range ranked {
		c, ok := infos[h.Rowid]
		if !ok {
			continue
		}
		score := math.Max(0, math.Min(1, h.Score))
		if score < q.MinScore {
			continue
		}
		lines, err := s.lines(t.base, t.reader.Commit, c.Path, c.StartLine, c.EndLine)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", c.Path, err)
		}
		if q.CaseSensitive && !strings.Contains(strings.Join(lines, ""), q.Text) && !allTermsCased(lines, q.Text) {
			continue
		}
		hit := CodeHit{FilePath: c.Path, StartLine: c.StartLine, EndLine: c.EndLine, SimilarityScore: round4(score),
			RepositoryAlias: t.alias, ChunkID: c.ID, Language: c.Language, Symbol: c.Symbol, Commit: t.reader.Commit}
		src := t.alias
		hit.SourceRepo = &src
		if mode == "semantic" {
			hit.LineNumber = c.StartLine
			hit.CodeSnippet = strings.Join(lines[:min(len(lines), 40)], "")
		} else {
			at := matchLine(lines, terms)
			hit.LineNumber = c.StartLine + at
			from := max(0, at-q.SnippetLines)
			to := min(len(lines), at+q.SnippetLines+1)
			hit.CodeSnippet = strings.Join(lines[from:to], "")
		}
		out = append(out, hit)
		if len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

func round4(f float64) float64 { return math.Round(f*10000) / 10000 }

// matchLine is the index of the line holding the most query terms.
func matchLine(lines []string, terms []string) int {
	best, bestN := 0, 0
	for i, l := range lines {
		lt := codetok.Terms(l)
		n := 0
		for _, q := range terms {
			for _, x := range lt {
				if x == q {
					n++
					break
				}
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	return best
}

// allTermsCased reports whether every word of text occurs with its exact
// case somewhere in lines.
func allTermsCased(lines []string, text string) bool {
	body := strings.Join(lines, "")
	for _, w := range strings.Fields(text) {
		if !strings.Contains(body, w) {
			return false
		}
	}
	return true
}

// fuzzyTerms expands each query term to the index terms within distance d.
func (s *Service) fuzzyTerms(ctx context.Context, t *target, text string, d int) ([]string, error) {
	var out []string
	for _, q := range codetok.Terms(text) {
		out = append(out, q)
		t.reader.EachTerm(func(v string) bool {
			if v != q && abs(len(v)-len(q)) <= d && within(q, v, d) {
				out = append(out, strings.Clone(v))
			}
			return true
		})
	}
	return out, ctx.Err()
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// within reports whether the edit distance of a and b is at most d.
func within(a, b string, d int) bool {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > d {
			return false
		}
		prev, cur = cur, prev
	}
	return prev[len(b)] <= d
}

// regexHits answers search_code with regex=true from the trigram index.
func (s *Service) regexHits(ctx context.Context, t *target, q CodeQuery, f *filter) ([]CodeHit, error) {
	tq := trigram.Query{Pattern: q.Text, CaseSensitive: q.CaseSensitive, ContextLines: min(q.SnippetLines, 10), MaxResults: q.Limit * 20}
	// Path filters go into the query so that the limit counts filtered matches.
	if q.PathFilter != "" {
		tq.Include = append(tq.Include, strings.Split(q.PathFilter, ",")...)
	}
	if q.ExcludePath != "" {
		tq.Exclude = append(tq.Exclude, strings.Split(q.ExcludePath, ",")...)
	}
	for _, e := range f.extensions {
		tq.Include = append(tq.Include, "*"+e)
	}
	res, err := t.reader.Regex(ctx, tq)
	if err != nil {
		return nil, &Error{Message: err.Error(), Hint: "regex uses RE2 syntax, e.g. func \\w+Handler"}
	}
	var out []CodeHit
	for _, m := range res.Matches {
		if !f.keep(m.Path, "") {
			continue
		}
		snippet := strings.Join(append(append(append([]string{}, m.Before...), m.LineContent), m.After...), "\n") + "\n"
		src := t.alias
		score := round4(math.Max(0, 1-0.01*float64(len(out))))
		if score < q.MinScore {
			break
		}
		lang := ""
		if l := files.Language(m.Path); l != nil {
			lang = *l
		}
		out = append(out, CodeHit{FilePath: m.Path, LineNumber: m.Line, StartLine: m.Line - len(m.Before), EndLine: m.Line + len(m.After), CodeSnippet: snippet,
			SimilarityScore: score, RepositoryAlias: t.alias, SourceRepo: &src, Commit: t.reader.Commit, Language: lang})
		if len(out) == q.Limit {
			break
		}
	}
	return out, nil
}
