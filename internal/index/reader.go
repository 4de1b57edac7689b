package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cidx/cidx/internal/trigram"
)

// Reader searches one published build. It is shared by concurrent
// searches and closed when the last user releases it after it was replaced.
type Reader struct {
	Dir          string
	Commit       string
	VectorsReady bool
	Embedder     string

	refs atomic.Int32
	trig *trigram.Index
	db   *sql.DB
	vecs *vectors

	// Per vector row: the chunk's file (index into paths) and language,
	// so that filters apply inside the exact vector scan.
	rowPath []int32
	rowLang []int32
	paths   []string
	langs   []string

	dfMu    sync.Mutex
	df      map[string]int
	nChunks int
}

func openReader(dir string, withVectors bool) (*Reader, error) {
	r := &Reader{Dir: dir}
	var err error
	if r.trig, err = trigram.Open(filepath.Join(dir, "trigram")); err != nil {
		return nil, fmt.Errorf("open trigram index: %w", err)
	}
	if r.db, err = openChunksDB(filepath.Join(dir, "chunks.db"), true); err != nil {
		r.trig.Close()
		return nil, err
	}
	if withVectors {
		v, err := openVectors(filepath.Join(dir, "vectors.bin"))
		if err == nil {
			r.vecs = v
			if err := r.loadRowMeta(); err != nil {
				r.close()
				return nil, err
			}
		}
	}
	return r, nil
}

func (r *Reader) loadRowMeta() error {
	rows, err := r.db.Query("SELECT rowid, path, language FROM chunks ORDER BY rowid")
	if err != nil {
		return err
	}
	defer rows.Close()
	pathIdx, langIdx := map[string]int32{}, map[string]int32{}
	byRowid := map[int64][2]int32{}
	for rows.Next() {
		var id int64
		var p, l string
		rows.Scan(&id, &p, &l)
		pi, ok := pathIdx[p]
		if !ok {
			pi = int32(len(r.paths))
			pathIdx[p] = pi
			r.paths = append(r.paths, p)
		}
		li, ok := langIdx[l]
		if !ok {
			li = int32(len(r.langs))
			langIdx[l] = li
			r.langs = append(r.langs, l)
		}
		byRowid[id] = [2]int32{pi, li}
	}
	r.rowPath = make([]int32, r.vecs.count)
	r.rowLang = make([]int32, r.vecs.count)
	for i, id := range r.vecs.rowids {
		m, ok := byRowid[id]
		if !ok {
			return fmt.Errorf("vector row %d has no chunk", id)
		}
		r.rowPath[i], r.rowLang[i] = m[0], m[1]
	}
	return rows.Err()
}

// Release gives back a reader obtained from Manager.Open.
func (r *Reader) Release() { r.release() }

func (r *Reader) release() {
	if r.refs.Add(-1) == 0 {
		r.close()
	}
}

func (r *Reader) close() {
	if r.trig != nil {
		r.trig.Close()
	}
	if r.db != nil {
		r.db.Close()
	}
	r.vecs.close()
}

// Keep filters hits by file path and language; nil keeps everything.
type Keep func(path, lang string) bool

// Hit is a ranked chunk.
type Hit struct {
	Rowid int64
	Score float64
}

// maxQueryTerms bounds the terms of a BM25 query: the rarest ones carry
// nearly all of the ranking, and every extra common term makes SQLite
// score another long posting list.
const maxQueryTerms = 6

// BM25 ranks chunks by BM25 over their terms (content, path, symbol).
func (r *Reader) BM25(ctx context.Context, text string, n int, keep Keep) ([]Hit, error) {
	q := r.ftsQuery(ctx, text)
	if q == "" {
		return nil, nil
	}
	if keep == nil {
		return r.bm25(ctx, q, n)
	}
	for k := max(100, n*4); ; k *= 4 {
		hits, err := r.bm25(ctx, q, k)
		if err != nil {
			return nil, err
		}
		meta, err := r.pathLang(ctx, hits)
		if err != nil {
			return nil, err
		}
		var kept []Hit
		for _, h := range hits {
			if m, ok := meta[h.Rowid]; ok && keep(m[0], m[1]) && len(kept) < n {
				kept = append(kept, h)
			}
		}
		if len(kept) >= n || len(hits) < k || k >= 20000 {
			return kept, nil
		}
	}
}

func (r *Reader) bm25(ctx context.Context, q string, k int) ([]Hit, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT rowid, bm25(fts, 1.0, 0.6, 1.5) FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?`, q, k)
	if err != nil {
		return nil, fmt.Errorf("bm25: %w", err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		var s float64
		if err := rows.Scan(&h.Rowid, &s); err != nil {
			return nil, err
		}
		h.Score = -s // bm25() is lower-is-better
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

func (r *Reader) pathLang(ctx context.Context, hits []Hit) (map[int64][2]string, error) {
	out := map[int64][2]string{}
	if len(hits) == 0 {
		return out, nil
	}
	args := make([]any, len(hits))
	for i, h := range hits {
		args[i] = h.Rowid
	}
	rows, err := r.db.QueryContext(ctx, "SELECT rowid, path, language FROM chunks WHERE rowid IN (?"+strings.Repeat(",?", len(hits)-1)+")", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p, l string
		rows.Scan(&id, &p, &l)
		out[id] = [2]string{p, l}
	}
	return out, rows.Err()
}

// commonShare is the share of chunks above which a term is "common": its
// IDF is so low that it barely moves a ranking, while its long posting
// list is what makes SQLite slow.
const commonShare = 0.10

// ftsQuery keeps the query's informative terms: the rarest ones (by how
// many chunks hold them), at most maxQueryTerms, dropping common terms
// unless nothing else is left, and ORs them.
func (r *Reader) ftsQuery(ctx context.Context, text string) string {
	terms := uniqueTerms(text)
	if len(terms) <= 1 {
		return orQuery(terms)
	}
	df := make(map[string]int, len(terms))
	for _, t := range terms {
		df[t] = r.docFreq(ctx, t)
	}
	sort.SliceStable(terms, func(i, j int) bool { return df[terms[i]] < df[terms[j]] })
	limit := int(commonShare * float64(r.chunkCount(ctx)))
	var kept []string
	for _, t := range terms {
		if df[t] == 0 || len(kept) == maxQueryTerms {
			continue
		}
		if df[t] > limit && len(kept) >= 2 {
			break
		}
		kept = append(kept, t)
	}
	return orQuery(kept)
}

// docFreq is how many chunks hold term, cached: a published build never changes.
func (r *Reader) docFreq(ctx context.Context, term string) int {
	r.dfMu.Lock()
	n, ok := r.df[term]
	r.dfMu.Unlock()
	if ok {
		return n
	}
	r.db.QueryRowContext(ctx, "SELECT doc FROM fts_vocab WHERE term = ?", term).Scan(&n)
	r.dfMu.Lock()
	if r.df == nil || len(r.df) > 100000 {
		r.df = map[string]int{}
	}
	r.df[term] = n
	r.dfMu.Unlock()
	return n
}

func (r *Reader) chunkCount(ctx context.Context) int {
	r.dfMu.Lock()
	defer r.dfMu.Unlock()
	if r.nChunks == 0 {
		r.db.QueryRowContext(ctx, "SELECT count(*) FROM chunks").Scan(&r.nChunks)
	}
	return r.nChunks
}

// ErrNoVectors means the build's vectors are not ready.
var ErrNoVectors = errors.New("vectors are not ready")

// Nearest returns the n chunks whose vectors are closest to q.
func (r *Reader) Nearest(q []float32, n int, keep Keep) ([]Hit, error) {
	if r.vecs == nil {
		return nil, ErrNoVectors
	}
	if len(q) != r.vecs.dim {
		return nil, fmt.Errorf("query vector has %d dimensions, the index %d (embedder changed? reindex)", len(q), r.vecs.dim)
	}
	var k func(int) bool
	if keep != nil {
		k = func(i int) bool { return keep(r.paths[r.rowPath[i]], r.langs[r.rowLang[i]]) }
	}
	res := r.vecs.search(q, n, k)
	hits := make([]Hit, len(res))
	for i, s := range res {
		hits[i] = Hit{Rowid: r.vecs.rowids[s.ord], Score: float64(s.score)}
	}
	return hits, nil
}

// Regex searches the trigram index.
func (r *Reader) Regex(ctx context.Context, q trigram.Query) (*trigram.Result, error) {
	return r.trig.Search(ctx, q)
}

// ChunkInfo describes one chunk.
type ChunkInfo struct {
	Rowid                  int64
	ID, Path               string
	Index                  int
	StartLine, EndLine     int
	StartOffset, EndOffset int
	Language, Kind, Symbol string
	ContentHash            string
	TokenCount             int
	CreatedAt              string
	Blob                   string
}

const chunkCols = "c.rowid, c.id, c.path, c.idx, c.start_line, c.end_line, c.start_offset, c.end_offset, c.language, c.kind, c.symbol, c.content_hash, c.token_count, c.created_at, f.blob"

func scanChunk(s interface{ Scan(...any) error }) (ChunkInfo, error) {
	var c ChunkInfo
	err := s.Scan(&c.Rowid, &c.ID, &c.Path, &c.Index, &c.StartLine, &c.EndLine, &c.StartOffset, &c.EndOffset, &c.Language, &c.Kind, &c.Symbol, &c.ContentHash, &c.TokenCount, &c.CreatedAt, &c.Blob)
	return c, err
}

// Chunks returns the chunks with the given rowids.
func (r *Reader) Chunks(ctx context.Context, rowids []int64) (map[int64]ChunkInfo, error) {
	out := map[int64]ChunkInfo{}
	if len(rowids) == 0 {
		return out, nil
	}
	args := make([]any, len(rowids))
	for i, id := range rowids {
		args[i] = id
	}
	rows, err := r.db.QueryContext(ctx, "SELECT "+chunkCols+" FROM chunks c JOIN files f ON f.path = c.path WHERE c.rowid IN (?"+strings.Repeat(",?", len(rowids)-1)+")", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return nil, err
		}
		out[c.Rowid] = c
	}
	return out, rows.Err()
}

// ErrNoChunk is returned for an unknown chunk id.
var ErrNoChunk = errors.New("no such chunk")

// ChunkByID returns one chunk by its stable id.
func (r *Reader) ChunkByID(ctx context.Context, id string) (ChunkInfo, error) {
	c, err := scanChunk(r.db.QueryRowContext(ctx, "SELECT "+chunkCols+" FROM chunks c JOIN files f ON f.path = c.path WHERE c.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, ErrNoChunk
	}
	return c, err
}

// HasVector reports whether chunk rowid has a vector in this build.
func (r *Reader) HasVector(rowid int64) bool {
	if r.vecs == nil {
		return false
	}
	ids := r.vecs.rowids
	lo, hi := 0, len(ids)
	for lo < hi {
		mid := (lo + hi) / 2
		if ids[mid] < rowid {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo < len(ids) && ids[lo] == rowid
}

// Vocabulary returns every term of the BM25 index, for fuzzy matching.
func (r *Reader) Vocabulary(ctx context.Context) ([]string, error) {
	rows, err := r.db.QueryContext(ctx, "SELECT term FROM fts_vocab")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		rows.Scan(&t)
		out = append(out, t)
	}
	return out, rows.Err()
}

// BM25Terms ranks chunks by BM25 for an explicit list of terms (already
// tokenised; used for fuzzy expansion).
func (r *Reader) BM25Terms(ctx context.Context, terms []string, n int, keep Keep) ([]Hit, error) {
	return r.BM25(ctx, strings.Join(terms, " "), n, keep)
}
