package index

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cidx/cidx/internal/bm25"
	"github.com/cidx/cidx/internal/chunk"
	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/trigram"
)

// Progress reports a build's progress (0-100) and what it is doing.
type Progress func(pct int, msg string)

// buildRequest is one lexical build.
type buildRequest struct {
	snapshot string // checked-out tree of commit
	gitDir   string
	commit   string
	out      string // the new build directory (must not exist)
	prev     string // the previous build directory, "" for a full build
	// entries, when not nil, are the files to index instead of the git
	// tree of commit (a tree that is not in git: the catalog).
	entries []gitcli.TreeEntry
}

const trigramShards = trigram.DefaultShards

// fileRec is one indexed file of a build.
type fileRec struct {
	path, blob, lang string
	size             int64
	skip             string // why the file is not indexed; "" when it is
	content          []byte
	chunks           []chunk.Chunk
	symbols          []chunk.Symbol
}

// buildLexical writes chunks.db, bm25.bin and the trigram shards of req.out.
func (m *Manager) buildLexical(ctx context.Context, req buildRequest, progress Progress) (*Manifest, error) {
	start := time.Now()
	cfg := m.cfg.withDefaults()
	entries := req.entries
	if entries == nil {
		var err error
		if entries, err = m.git.ListTree(ctx, req.gitDir, req.commit); err != nil {
			return nil, fmt.Errorf("list files of %s: %w", short(req.commit), err)
		}
	}
	root, err := os.OpenRoot(req.snapshot)
	if err != nil {
		return nil, fmt.Errorf("open snapshot: %w", err)
	}
	defer root.Close()

	tmp := req.out + ".tmp-" + strings.ToLower(rand.Text()[:6])
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(tmp)
		}
	}()
	man := &Manifest{Version: FormatVersion, Commit: req.commit, Skipped: map[string]int{}, Int8: cfg.Int8Vectors}

	// Start from the previous build's database when it is usable: rows of
	// unchanged files (and their rowids, which the vector file is keyed
	// by) carry over, and only differences are applied.
	dbPath := filepath.Join(tmp, "chunks.db")
	prevFiles, prevSkipped := map[string]string{}, map[string]skipRow{}
	incremental := false
	if req.prev != "" {
		if err := copyFile(filepath.Join(req.prev, "chunks.db"), dbPath); err == nil {
			incremental = true
		}
	}
	db, err := openChunksDB(dbPath, false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if incremental {
		if v, _ := strconv.Atoi(getMeta(ctx, db, "version")); v != FormatVersion || getMeta(ctx, db, "exclude") != strings.Join(cfg.Exclude, "\n") || sparse(req.prev) {
			// Another format or file selection, or chunk ids spread too
			// thin: start over.
			incremental = false
			db.Close()
			os.Remove(dbPath)
			if db, err = openChunksDB(dbPath, false); err != nil {
				return nil, err
			}
		}
	}
	if !incremental {
		if _, err := db.ExecContext(ctx, chunksSchema); err != nil {
			return nil, fmt.Errorf("create index database: %w", err)
		}
	} else {
		if err := loadPrev(ctx, db, prevFiles, prevSkipped); err != nil {
			return nil, err
		}
	}
	man.Incremental = incremental

	// Decide, per file of the new tree: unchanged (keep), skipped, or read.
	blobs := make(map[string]string, len(entries))
	for _, e := range entries {
		blobs[e.Path] = e.Blob
	}
	var toRead []gitcli.TreeEntry
	var nameSkips []*fileRec
	for _, e := range entries {
		if blob, ok := prevFiles[e.Path]; ok && blob == e.Blob {
			man.ReusedFiles++
			continue
		}
		if s, ok := prevSkipped[e.Path]; ok && s.Blob == e.Blob {
			continue // still skipped for the same reason; its row stays
		}
		if reason := m.skipByName(cfg, e); reason != "" {
			nameSkips = append(nameSkips, &fileRec{path: e.Path, blob: e.Blob, size: e.Size, skip: reason})
			continue
		}
		toRead = append(toRead, e)
	}
	var changed []string
	removed := map[uint32]bool{} // chunk rowids of changed and vanished files
	for p, blob := range prevFiles {
		if blobs[p] != blob {
			changed = append(changed, p)
		}
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// Remove what changed or vanished.
	for p, s := range prevSkipped {
		if blobs[p] != s.Blob {
			if _, err := tx.ExecContext(ctx, "DELETE FROM skipped WHERE path = ?", p); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range changed {
		if err := deleteFile(ctx, tx, p, removed); err != nil {
			return nil, err
		}
	}

	// Read, classify and chunk new and changed files in parallel; one
	// writer inserts their rows.
	progress(5, fmt.Sprintf("reading %d files", len(toRead)))
	recs := make(chan *fileRec, 64)
	var readErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	work := make(chan gitcli.TreeEntry)
	workers := max(2, runtime.NumCPU())
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range work {
				rec, err := m.readFile(root, cfg, e)
				if err != nil {
					errOnce.Do(func() { readErr = err })
					continue
				}
				recs <- rec
			}
		}()
	}
	go func() {
		defer close(work)
		for _, e := range toRead {
			select {
			case work <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(recs) }()

	w, err := newWriter(ctx, tx)
	if err != nil {
		return nil, err
	}
	lex := bm25.NewBuilder()
	defer w.close()
	for _, rec := range nameSkips {
		if err := w.skip(rec); err != nil {
			return nil, err
		}
	}
	var newDocs []trigram.Doc
	done := 0
	now := time.Now().UTC().Format(time.RFC3339)
	for rec := range recs {
		done++
		if done%500 == 0 {
			progress(5+40*done/max(1, len(toRead)), fmt.Sprintf("indexed %d of %d files", done, len(toRead)))
		}
		if rec.skip != "" {
			if err := w.skip(rec); err != nil {
				return nil, err
			}
			continue
		}
		man.ReadFiles++
		if err := w.file(rec, now, lex); err != nil {
			return nil, err
		}
		if incremental {
			changed = append(changed, rec.path)
		} else {
			newDocs = append(newDocs, trigramDoc(rec))
		}
	}
	if readErr != nil {
		return nil, readErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for k, v := range map[string]string{"version": strconv.Itoa(FormatVersion), "commit": req.commit, "exclude": strings.Join(cfg.Exclude, "\n")} {
		if err := setMeta(ctx, tx, k, v); err != nil {
			return nil, err
		}
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("write index database: %w", err)
	}
	// Count what the build holds.
	db.QueryRowContext(ctx, "SELECT count(*), coalesce(sum(size), 0) FROM files").Scan(&man.Files, &man.Bytes)
	db.QueryRowContext(ctx, "SELECT count(*) FROM chunks").Scan(&man.Chunks)
	if rows, err := db.QueryContext(ctx, "SELECT path, reason, size FROM skipped ORDER BY path"); err == nil {
		for rows.Next() {
			var s Skip
			rows.Scan(&s.Path, &s.Reason, &s.Size)
			man.Skipped[s.Reason]++
			addSkip(man, s)
		}
		rows.Close()
	}

	progress(48, "writing the BM25 index")
	if err := writeBM25(filepath.Join(tmp, "bm25.bin"), req.prev, incremental, removed, lex); err != nil {
		return nil, err
	}
	lex = nil

	progress(50, "building trigram shards")
	trigDir := filepath.Join(tmp, "trigram")
	opts := trigram.BuildOptions{Shards: trigramShards}
	if incremental {
		ch := trigram.Changes{
			Paths: changed,
			Shard: func(shard int) ([]trigram.Doc, error) {
				return m.storedDocs(ctx, db, root, "shard = ?", shard)
			},
			Docs: func(paths []string) ([]trigram.Doc, error) {
				var out []trigram.Doc
				for len(paths) > 0 {
					part := paths[:min(500, len(paths))]
					paths = paths[len(part):]
					in, args := inList(part)
					docs, err := m.storedDocs(ctx, db, root, "path IN "+in, args...)
					if err != nil {
						return nil, err
					}
					out = append(out, docs...)
				}
				return out, nil
			},
		}
		if err := trigram.Update(ctx, filepath.Join(req.prev, "trigram"), trigDir, ch, opts); err != nil {
			return nil, fmt.Errorf("update trigram index: %w", err)
		}
	} else {
		if err := trigram.Build(ctx, trigDir, newDocs, opts); err != nil {
			return nil, fmt.Errorf("build trigram index: %w", err)
		}
	}
	newDocs = nil

	man.LexicalMS = time.Since(start).Milliseconds()
	man.BuiltAt = time.Now().UTC().Format(time.RFC3339)
	db.Close()
	man.DiskBytes = dirSize(tmp)
	if err := writeManifest(tmp, man); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, req.out); err != nil {
		return nil, err
	}
	ok = true
	return man, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func addSkip(man *Manifest, s Skip) {
	if len(man.SkippedFiles) < 100 {
		man.SkippedFiles = append(man.SkippedFiles, s)
	}
}

func loadPrev(ctx context.Context, db *sql.DB, files map[string]string, skipped map[string]skipRow) error {
	rows, err := db.QueryContext(ctx, "SELECT path, blob FROM files")
	if err != nil {
		return err
	}
	for rows.Next() {
		var p, b string
		rows.Scan(&p, &b)
		files[p] = b
	}
	rows.Close()
	rows, err = db.QueryContext(ctx, "SELECT path, blob FROM skipped")
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var p string
		var s skipRow
		rows.Scan(&p, &s.Blob)
		skipped[p] = s
	}
	return rows.Err()
}

type skipRow struct{ Blob string }

// sparse reports whether the chunk ids of the build in dir have become
// sparse: incremental builds append new chunks after the highest id and
// never reuse deleted ones, and the BM25 and filter tables are sized by
// the highest id. A full build renumbers them.
func sparse(dir string) bool {
	ix, err := bm25.Open(filepath.Join(dir, "bm25.bin"))
	if err != nil {
		return true
	}
	defer ix.Close()
	return ix.MaxDoc() > 2*ix.Docs()+10000
}

// writeBM25 writes the build's BM25 index: the previous one merged with
// the changes, or the builder's documents alone.
func writeBM25(path, prevDir string, incremental bool, removed map[uint32]bool, lex *bm25.Builder) error {
	if !incremental {
		return lex.Write(path)
	}
	old, err := bm25.Open(filepath.Join(prevDir, "bm25.bin"))
	if err != nil {
		return fmt.Errorf("open the previous BM25 index: %w", err)
	}
	defer old.Close()
	// A dense set: the merge asks once per posting.
	var gone []bool
	for d := range removed {
		if int(d) >= len(gone) {
			gone = append(gone, make([]bool, int(d)+1-len(gone))...)
		}
		gone[d] = true
	}
	if err := bm25.Merge(path, old, func(d uint32) bool { return int(d) < len(gone) && gone[d] }, lex); err != nil {
		return fmt.Errorf("update the BM25 index: %w", err)
	}
	return nil
}

// deleteFile removes file p's rows, adding its chunks' rowids to removed.
func deleteFile(ctx context.Context, tx *sql.Tx, p string, removed map[uint32]bool) error {
	var first, last int64
	if err := tx.QueryRowContext(ctx, "SELECT first_chunk, last_chunk FROM files WHERE path = ?", p).Scan(&first, &last); err != nil {
		return fmt.Errorf("remove %s from the index: %w", p, err)
	}
	for id := first; id <= last; id++ {
		removed[uint32(id)] = true
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM chunks WHERE rowid BETWEEN ? AND ?", first, last); err != nil {
		return fmt.Errorf("remove %s from the index: %w", p, err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM files WHERE path = ?", p); err != nil {
		return fmt.Errorf("remove %s from the index: %w", p, err)
	}
	return nil
}

// skipByName applies the rules that need no content: size and excludes.
func (m *Manager) skipByName(cfg Config, e gitcli.TreeEntry) string {
	if excluded(e.Path, cfg.Exclude) {
		return "excluded"
	}
	if e.Size > cfg.MaxFileBytes {
		return "too_large"
	}
	return ""
}

// readFile reads and chunks one file, or returns a skipped record
// (lang "" and no content) with the reason in chunks' place.
func (m *Manager) readFile(root *os.Root, cfg Config, e gitcli.TreeEntry) (*fileRec, error) {
	rec := &fileRec{path: e.Path, blob: e.Blob, size: e.Size}
	data, err := root.ReadFile(e.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("snapshot lacks %s: %w", e.Path, err)
		}
		return nil, fmt.Errorf("read %s: %w", e.Path, err)
	}
	reason := ""
	switch {
	case isBinary(data):
		reason = "binary"
	case !cfg.IndexGenerated && isGenerated(data):
		reason = "generated"
	}
	if reason != "" {
		rec.skip = reason
		return rec, nil
	}
	rec.content = data
	lang := "text"
	if l := files.Language(e.Path); l != nil {
		lang = *l
	}
	rec.lang = lang
	rec.chunks, rec.symbols = chunk.Split(e.Path, lang, data, chunk.Options{})
	return rec, nil
}

func isBinary(data []byte) bool {
	head := data[:min(len(data), 8000)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head[:validPrefix(head)])
}

// validPrefix trims a possibly cut multi-byte sequence at the end of head.
func validPrefix(head []byte) int {
	n := len(head)
	for i := 0; i < 3 && n > 0; i++ {
		if utf8.RuneStart(head[n-1]) {
			if r, size := utf8.DecodeLastRune(head[:n]); r == utf8.RuneError && size <= 1 {
				return n - 1
			}
			return n
		}
		n--
	}
	return len(head)
}

// isGenerated recognises the common "generated, do not edit" markers in
// the first lines.
func isGenerated(data []byte) bool {
	head := data[:min(len(data), 1024)]
	if bytes.Contains(head, []byte("Code generated")) && bytes.Contains(head, []byte("DO NOT EDIT")) {
		return true
	}
	return bytes.Contains(head, []byte("@generated"))
}

func trigramDoc(rec *fileRec) trigram.Doc {
	return trigram.Doc{Path: rec.path, Content: rec.content, Language: rec.lang, Symbols: trigramSymbols(rec.symbols)}
}

func trigramSymbols(in []chunk.Symbol) []trigram.Symbol {
	syms := make([]trigram.Symbol, len(in))
	for i, s := range in {
		syms[i] = trigram.Symbol{Name: s.Name, Kind: s.Kind, StartOffset: s.StartOffset, EndOffset: s.EndOffset}
	}
	return syms
}

// storedDocs reads the indexed files selected by where (a fixed SQL
// condition on the files table, with args) back from the snapshot, with
// their stored symbols: what trigram.Update asks for.
func (m *Manager) storedDocs(ctx context.Context, db *sql.DB, root *os.Root, where string, args ...any) ([]trigram.Doc, error) {
	rows, err := db.QueryContext(ctx, "SELECT path, language, symbols FROM files WHERE "+where+" ORDER BY path", args...)
	if err != nil {
		return nil, err
	}
	var docs []trigram.Doc
	for rows.Next() {
		var d trigram.Doc
		var packed []byte
		if err := rows.Scan(&d.Path, &d.Language, &packed); err != nil {
			rows.Close()
			return nil, err
		}
		if d.Symbols, err = unpackSymbols(packed); err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		docs = append(docs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range docs {
		if docs[i].Content, err = root.ReadFile(docs[i].Path); err != nil {
			return nil, fmt.Errorf("read %s: %w", docs[i].Path, err)
		}
	}
	return docs, nil
}

// writer inserts a build's rows through prepared statements.
type writer struct {
	ctx                                  context.Context
	insFile, skipped, insChunk, setRange *sql.Stmt
}

func newWriter(ctx context.Context, tx *sql.Tx) (*writer, error) {
	w := &writer{ctx: ctx}
	var err error
	prep := func(q string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var st *sql.Stmt
		st, err = tx.PrepareContext(ctx, q)
		return st
	}
	w.insFile = prep("INSERT INTO files(path, blob, language, size, shard, indexed_at, symbols) VALUES(?, ?, ?, ?, ?, ?, ?)")
	w.skipped = prep("INSERT OR REPLACE INTO skipped(path, blob, reason, size) VALUES(?, ?, ?, ?)")
	w.insChunk = prep(`INSERT INTO chunks(id, file, idx, start_line, end_line, start_offset, end_offset, kind, symbol, content_hash, token_count)
		VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	w.setRange = prep("UPDATE files SET first_chunk = ?, last_chunk = ? WHERE id = ?")
	return w, err
}

func (w *writer) close() {
	for _, st := range []*sql.Stmt{w.insFile, w.skipped, w.insChunk, w.setRange} {
		if st != nil {
			st.Close()
		}
	}
}

func (w *writer) skip(rec *fileRec) error {
	_, err := w.skipped.ExecContext(w.ctx, rec.path, rec.blob, rec.skip, rec.size)
	return err
}

// file inserts rec's rows and adds its chunks to the BM25 builder.
func (w *writer) file(rec *fileRec, now string, lex *bm25.Builder) error {
	res, err := w.insFile.ExecContext(w.ctx, rec.path, rec.blob, rec.lang, rec.size, trigram.ShardOf(rec.path, trigramShards), now, packSymbols(trigramSymbols(rec.symbols)))
	if err != nil {
		return fmt.Errorf("index %s: %w", rec.path, err)
	}
	fileID, _ := res.LastInsertId()
	first, last := int64(0), int64(-1)
	for i, c := range rec.chunks {
		sum := sha256.Sum256([]byte(c.Content))
		hash := sum[:16]
		id := chunkID(rec.path, c.StartOffset, c.EndOffset, hash)
		res, err := w.insChunk.ExecContext(w.ctx, id, fileID, i, c.StartLine, c.EndLine, c.StartOffset, c.EndOffset, c.Kind, c.Symbol, hash, (len(c.Content)+3)/4)
		if err != nil {
			return fmt.Errorf("index %s: %w", rec.path, err)
		}
		rowid, _ := res.LastInsertId()
		if rowid <= 0 || rowid > math.MaxUint32 {
			return fmt.Errorf("index %s: chunk rowid %d out of range", rec.path, rowid)
		}
		lex.AddText(uint32(rowid), c.Content, rec.path, c.Symbol)
		if i == 0 {
			first = rowid
		} else if rowid != last+1 {
			return fmt.Errorf("index %s: chunk rowids are not consecutive (%d after %d)", rec.path, rowid, last)
		}
		last = rowid
	}
	if len(rec.chunks) > 0 {
		if _, err := w.setRange.ExecContext(w.ctx, first, last, fileID); err != nil {
			return fmt.Errorf("index %s: %w", rec.path, err)
		}
	}
	return nil
}

// chunkID is stable while the file's content is: it hashes the path, the
// chunk's byte range and its content.
func chunkID(path string, start, end int, hash []byte) []byte {
	sum := sha256.Sum256([]byte(path + "\x00" + strconv.Itoa(start) + "\x00" + strconv.Itoa(end) + "\x00" + hex.EncodeToString(hash)))
	return sum[:12]
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func writeManifest(dir string, man *Manifest) error {
	b, _ := json.MarshalIndent(man, "", "  ")
	return os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
}

func readManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, err
	}
	var man Manifest
	return &man, json.Unmarshal(b, &man)
}
