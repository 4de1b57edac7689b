package index

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/cidx/cidx/internal/bm25"
	"github.com/cidx/cidx/internal/codetok"
	"github.com/cidx/cidx/internal/trigram"
)

// Reader searches one published build. It is shared by concurrent
// searches and closed when the last user releases it after it was replaced.
type Reader struct {
	// What the build is; set before the reader is shared, then read-only.
	Dir          string
	Commit       string
	VectorsReady bool
	Embedder     string

	refs     atomic.Int32
	lastUsed atomic.Int64 // unix nanoseconds of the last Open
	memBytes int64        // heap held: decoded vectors and chunk tables
	trig     *trigram.Index
	db       *sql.DB
	lex      *bm25.Index
	vecs     *vectors

	// Per chunk rowid: its file (index into paths and fileLang, -1 for
	// none), so that filters apply inside the BM25 and vector scans.
	docFile  []int32
	paths    []string
	fileLang []string
}

func openReader(dir string, withVectors bool) (*Reader, error) {
	r := &Reader{Dir: dir}
	var err error
	if r.trig, err = trigram.Open(filepath.Join(dir, "trigram")); err != nil {
		return nil, fmt.Errorf("open trigram index: %w", err)
	}
	if r.db, err = openChunksDB(filepath.Join(dir, "chunks.db"), true); err != nil {
		r.close()
		return nil, err
	}
	if r.lex, err = bm25.Open(filepath.Join(dir, "bm25.bin")); err != nil {
		r.close()
		return nil, fmt.Errorf("open BM25 index: %w", err)
	}
	if err := r.loadDocs(); err != nil {
		r.close()
		return nil, err
	}
	r.memBytes = int64(4*len(r.docFile)) + int64(len(r.paths))*64
	if withVectors {
		if v, err := openVectors(filepath.Join(dir, "vectors.bin")); err == nil {
			if v.rows8 != nil {
				r.memBytes += int64(4 * len(v.f32)) // decoded onto the heap
			}
			r.vecs = v
			for _, id := range v.rowids {
				if id < 0 || id >= int64(len(r.docFile)) || r.docFile[id] < 0 {
					r.close()
					return nil, fmt.Errorf("vector row %d has no chunk", id)
				}
			}
		}
	}
	return r, nil
}

// loadDocs reads which file each chunk belongs to.
func (r *Reader) loadDocs() error {
	rows, err := r.db.Query("SELECT id, path, language FROM files")
	if err != nil {
		return err
	}
	slot := map[int64]int32{}
	for rows.Next() {
		var id int64
		var p, l string
		if err := rows.Scan(&id, &p, &l); err != nil {
			rows.Close()
			return err
		}
		slot[id] = int32(len(r.paths))
		r.paths = append(r.paths, p)
		r.fileLang = append(r.fileLang, l)
	}
	rows.Close()
	rows, err = r.db.Query("SELECT rowid, file FROM chunks ORDER BY rowid")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, file int64
		if err := rows.Scan(&id, &file); err != nil {
			return err
		}
		for int64(len(r.docFile)) <= id {
			r.docFile = append(r.docFile, -1)
		}
		s, ok := slot[file]
		if !ok {
			return fmt.Errorf("chunk %d belongs to no file", id)
		}
		r.docFile[id] = s
	}
	return rows.Err()
}

// fileFilter turns keep into a per-chunk test that evaluates keep once
// per file: a query may touch most chunks, and a path glob is not free.
func (r *Reader) fileFilter(keep Keep) func(rowid int64) bool {
	if keep == nil {
		return nil
	}
	verdict := make([]int8, len(r.paths)) // 0 unknown, 1 keep, 2 drop
	return func(rowid int64) bool {
		if rowid < 0 || rowid >= int64(len(r.docFile)) || r.docFile[rowid] < 0 {
			return false
		}
		f := r.docFile[rowid]
		if verdict[f] == 0 {
			verdict[f] = 2
			if keep(r.paths[f], r.fileLang[f]) {
				verdict[f] = 1
			}
		}
		return verdict[f] == 1
	}
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
	r.lex.Close()
	r.vecs.close()
}

// Keep filters hits by file path and language; nil keeps everything.
type Keep func(path, lang string) bool

// Hit is a ranked chunk.
type Hit struct {
	Rowid int64
	Score float64
}

// BM25 ranks chunks by BM25 over their terms (content, path, symbol);
// every term of text counts.
func (r *Reader) BM25(ctx context.Context, text string, n int, keep Keep) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	terms := codetok.Terms(text)
	var k func(uint32) bool
	if f := r.fileFilter(keep); f != nil {
		k = func(d uint32) bool { return f(int64(d)) }
	}
	res := r.lex.Search(terms, n, k)
	hits := make([]Hit, len(res))
	for i, h := range res {
		hits[i] = Hit{Rowid: int64(h.Doc), Score: h.Score}
	}
	return hits, nil
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
	if f := r.fileFilter(keep); f != nil {
		k = func(i int) bool { return f(r.vecs.rowids[i]) }
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

const chunkCols = "c.rowid, c.id, f.path, c.idx, c.start_line, c.end_line, c.start_offset, c.end_offset, f.language, c.kind, c.symbol, c.content_hash, c.token_count, f.indexed_at, f.blob"

func scanChunk(s interface{ Scan(...any) error }) (ChunkInfo, error) {
	var c ChunkInfo
	var id, hash []byte
	err := s.Scan(&c.Rowid, &id, &c.Path, &c.Index, &c.StartLine, &c.EndLine, &c.StartOffset, &c.EndOffset, &c.Language, &c.Kind, &c.Symbol, &hash, &c.TokenCount, &c.CreatedAt, &c.Blob)
	c.ID, c.ContentHash = hex.EncodeToString(id), hex.EncodeToString(hash)
	return c, err
}

// Chunks returns the chunks with the given rowids.
func (r *Reader) Chunks(ctx context.Context, rowids []int64) (map[int64]ChunkInfo, error) {
	out := map[int64]ChunkInfo{}
	if len(rowids) == 0 {
		return out, nil
	}
	in, args := inList(rowids)
	rows, err := r.db.QueryContext(ctx, "SELECT "+chunkCols+" FROM chunks c JOIN files f ON f.id = c.file WHERE c.rowid IN "+in, args...)
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

// Defining returns which of the chunks define name: the chunk's own
// symbol is name, or a symbol of its file named name starts inside it (a
// method inside a class chunk). Names compare case-insensitively, and a
// qualified symbol (Type.Method) also matches by its last components.
func (r *Reader) Defining(ctx context.Context, rowids []int64, name string) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(rowids) == 0 {
		return out, nil
	}
	matches := func(sym string) bool {
		return strings.EqualFold(sym, name) ||
			len(sym) > len(name) && sym[len(sym)-len(name)-1] == '.' && strings.EqualFold(sym[len(sym)-len(name):], name)
	}
	in, args := inList(rowids)
	rows, err := r.db.QueryContext(ctx, "SELECT c.rowid, c.symbol, c.start_offset, c.end_offset, f.id, f.symbols FROM chunks c JOIN files f ON f.id = c.file WHERE c.rowid IN "+in, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	fileSyms := map[int64][]trigram.Symbol{}
	for rows.Next() {
		var id, file int64
		var sym string
		var start, end int
		var packed []byte
		if err := rows.Scan(&id, &sym, &start, &end, &file, &packed); err != nil {
			return nil, err
		}
		if matches(sym) {
			out[id] = true
			continue
		}
		syms, ok := fileSyms[file]
		if !ok {
			syms, _ = unpackSymbols(packed)
			fileSyms[file] = syms
		}
		for _, s := range syms {
			if s.StartOffset >= start && s.StartOffset < end && matches(s.Name) {
				out[id] = true
				break
			}
		}
	}
	return out, rows.Err()
}

// inList is "(?,?,...)" for values, and the values as query arguments.
func inList[T any](values []T) (string, []any) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return "(?" + strings.Repeat(",?", len(values)-1) + ")", args
}

// ErrNoChunk is returned for an unknown chunk id.
var ErrNoChunk = errors.New("no such chunk")

// ChunkByID returns one chunk by its stable id (24 hex digits).
func (r *Reader) ChunkByID(ctx context.Context, id string) (ChunkInfo, error) {
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != 12 {
		return ChunkInfo{}, ErrNoChunk
	}
	c, err := scanChunk(r.db.QueryRowContext(ctx, "SELECT "+chunkCols+" FROM chunks c JOIN files f ON f.id = c.file WHERE c.id = ?", raw))
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

// EachTerm calls fn with every term of the BM25 index, in order, until fn
// returns false (for fuzzy matching). The string is only valid during the
// call.
func (r *Reader) EachTerm(fn func(term string) bool) { r.lex.EachTerm(fn) }
