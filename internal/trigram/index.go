package trigram

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp/syntax"
	"slices"
	"sort"
	"sync"

	"github.com/sourcegraph/zoekt"
	"github.com/sourcegraph/zoekt/index"
	"github.com/sourcegraph/zoekt/query"

	"github.com/cidx/cidx/internal/mmapfile"
)

// Index is an open, read-only index. It is safe for concurrent use.
type Index struct {
	dir string

	mu     sync.RWMutex // Search holds it for reading; Close for writing
	closed bool
	shards []*shard
	nDocs  int
}

type shard struct {
	searcher zoekt.Searcher
	// docs are the shard's documents in zoekt order; content points into
	// zoekt's mmap of the shard file, so nothing is copied onto the heap.
	docs   []doc
	byName map[string]int32
	// raw are documents zoekt cannot store (they contain NUL bytes); their
	// content points into rawMap.
	raw    []doc
	rawMap []byte
	// hidden are documents of a hash shard superseded by the delta shard
	// or removed (see Update).
	hidden map[string]bool
}

// visible drops the hidden documents from ds.
func (sh *shard) visible(ds []doc) []doc {
	if len(sh.hidden) == 0 {
		return ds
	}
	out := make([]doc, 0, len(ds))
	for _, d := range ds {
		if !sh.hidden[d.path] {
			out = append(out, d)
		}
	}
	return out
}

type doc struct {
	path    string
	content []byte
}

// Open opens the index in dir. Shard files are memory-mapped by zoekt
// (index.NewIndexFile); the corpus is not read into the Go heap. The
// package talks to each shard's zoekt.Searcher directly rather than through
// zoekt's search.NewDirectorySearcher, which loads shards asynchronously
// and copies every returned file content to the heap.
func Open(dir string) (*Index, error) {
	m, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	metas := m.Shards
	ids := make([]int, len(metas))
	for i := range ids {
		ids[i] = i
	}
	if m.Delta != nil {
		metas = append(slices.Clone(metas), *m.Delta)
		ids = append(ids, deltaShard)
	}
	ix := &Index{dir: dir, shards: make([]*shard, len(metas))}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, 4)
	for i, meta := range metas {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			sh, err := openShard(dir, ids[i], meta)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			ix.shards[i] = sh
		}()
	}
	wg.Wait()
	if firstErr != nil {
		ix.closeShards()
		return nil, firstErr
	}
	for _, sh := range ix.shards {
		ix.nDocs += len(sh.visible(sh.docs)) + len(sh.visible(sh.raw))
	}
	return ix, nil
}

func openShard(dir string, s int, meta shardMeta) (*shard, error) {
	f, err := os.Open(filepath.Join(dir, shardFile(s)))
	if err != nil {
		return nil, fmt.Errorf("trigram: %w", err)
	}
	ifile, err := index.NewIndexFile(f) // takes ownership of f
	if err != nil {
		return nil, fmt.Errorf("trigram: mapping %s: %w", shardFile(s), err)
	}
	searcher, err := index.NewSearcher(ifile)
	if err != nil {
		ifile.Close()
		return nil, fmt.Errorf("trigram: loading %s: %w", shardFile(s), err)
	}
	sh := &shard{searcher: searcher}
	if len(meta.Hidden) > 0 {
		sh.hidden = make(map[string]bool, len(meta.Hidden))
		for _, p := range meta.Hidden {
			sh.hidden[p] = true
		}
	}
	// Enumerate the documents once: a match-all query with Whole returns
	// each document's name and a slice of the mapped content.
	res, err := searcher.Search(context.Background(), &query.Const{Value: true},
		&zoekt.SearchOptions{Whole: true, ShardMaxMatchCount: 1 << 30})
	if err != nil {
		sh.close()
		return nil, fmt.Errorf("trigram: listing %s: %w", shardFile(s), err)
	}
	sh.docs = make([]doc, len(res.Files))
	sh.byName = make(map[string]int32, len(res.Files))
	for i, fm := range res.Files {
		sh.docs[i] = doc{path: fm.FileName, content: fm.Content}
		sh.byName[fm.FileName] = int32(i)
	}
	if len(sh.docs) != meta.Docs {
		sh.close()
		return nil, fmt.Errorf("trigram: %s holds %d documents, manifest says %d", shardFile(s), len(sh.docs), meta.Docs)
	}
	if meta.RawDocs > 0 {
		if err := sh.openRaw(filepath.Join(dir, rawFile(s))); err != nil {
			sh.close()
			return nil, err
		}
	}
	return sh, nil
}

func (sh *shard) openRaw(name string) error {
	data, err := mmapfile.Map(name)
	if err != nil {
		return fmt.Errorf("trigram: %w", err)
	}
	if len(data) == 0 {
		return errors.New("trigram: empty raw document file")
	}
	sh.rawMap = data
	sh.raw, err = parseRaw(data)
	return err
}

func (sh *shard) close() {
	if sh.searcher != nil {
		sh.searcher.Close()
	}
	mmapfile.Unmap(sh.rawMap)
}

func (ix *Index) closeShards() {
	for _, sh := range ix.shards {
		if sh != nil {
			sh.close()
		}
	}
	ix.shards = nil
}

// Close unmaps the index. It waits for running searches; later calls fail.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	ix.closeShards()
	return nil
}

// NumDocs returns the number of documents in the index.
func (ix *Index) NumDocs() int { return ix.nDocs }

// ErrClosed is returned by searches on a closed Index.
var ErrClosed = errors.New("trigram: index is closed")

// SymbolHit is one symbol definition found by Symbols.
type SymbolHit struct {
	Path string
	Line int // 1-based
	Name string
	Kind string
}

// DefaultMaxSymbols is used when Symbols is called with max <= 0.
const DefaultMaxSymbols = 100

// Symbols finds symbol definitions (as supplied in Doc.Symbols) whose name
// matches namePattern, a Go regexp that is not anchored (use ^...$ for
// whole names; (?i) for case-insensitive). It uses zoekt's sym: query.
// Results are sorted by path, line and name, at most max of them.
func (ix *Index) Symbols(ctx context.Context, namePattern string, max int) ([]SymbolHit, error) {
	if max <= 0 {
		max = DefaultMaxSymbols
	}
	re, err := syntax.Parse(namePattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidPattern, err)
	}
	q := &query.Symbol{Expr: &query.Regexp{Regexp: re, Content: true, CaseSensitive: true}}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.closed {
		return nil, ErrClosed
	}
	var (
		mu   sync.Mutex
		hits []SymbolHit
		seen = map[SymbolHit]bool{}
	)
	err = ix.eachShard(ctx, func(sh *shard) error {
		res, err := sh.searcher.Search(ctx, q, &zoekt.SearchOptions{ShardMaxMatchCount: 1 << 30})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, fm := range res.Files {
			if sh.hidden[fm.FileName] {
				continue
			}
			for _, lm := range fm.LineMatches {
				if lm.FileName {
					continue
				}
				for _, fr := range lm.LineFragments {
					if fr.SymbolInfo == nil {
						continue
					}
					h := SymbolHit{Path: fm.FileName, Line: lm.LineNumber, Name: fr.SymbolInfo.Sym, Kind: fr.SymbolInfo.Kind}
					// A name pattern can match a symbol more than once.
					if !seen[h] {
						seen[h] = true
						hits = append(hits, h)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Name < b.Name
	})
	if len(hits) > max {
		hits = hits[:max]
	}
	return hits, nil
}

// eachShard runs f on every shard, GOMAXPROCS at a time.
func (ix *Index) eachShard(ctx context.Context, f func(*shard) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	sem := make(chan struct{}, workers())
	for _, sh := range ix.shards {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(sh); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
