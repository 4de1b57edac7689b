package index

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cidx/cidx/internal/embed"
	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/store"
)

// Manager builds, publishes and opens the indexes of golden repositories.
type Manager struct {
	db       *store.DB
	git      *gitcli.Runner
	reposDir string // DATA_DIR/repos
	emb      embed.Embedder
	cfg      Config
	log      *slog.Logger

	mu      sync.Mutex
	readers map[string]*Reader // by build directory
	current *store.Cache[string, row]
	locks   sync.Map // alias -> *sync.Mutex: one build per repository at a time
}

// NewManager returns a Manager storing builds under dataDir/repos/ALIAS/index.
func NewManager(db *store.DB, git *gitcli.Runner, dataDir string, emb embed.Embedder, cfg Config, log *slog.Logger) *Manager {
	return &Manager{db: db, git: git, reposDir: filepath.Join(dataDir, "repos"), emb: emb, cfg: cfg.withDefaults(), log: log,
		readers: map[string]*Reader{}, current: store.NewCache[string, row](time.Second, 10000)}
}

// Embedder is the embedder new builds use.
func (m *Manager) Embedder() embed.Embedder { return m.emb }

// row is a repository's published index.
type row struct {
	Dir, Commit, Embedder, State, Error, BuiltAt string
	VectorsReady                                 bool
	Manifest                                     Manifest
}

func (m *Manager) indexDir(alias string) string { return filepath.Join(m.reposDir, alias, "index") }

func (m *Manager) load(ctx context.Context, alias string) (row, error) {
	return m.current.Get(alias, func() (row, error) {
		var r row
		var vr int
		var man string
		var built sql.NullString
		err := m.db.QueryRowFast(ctx, "SELECT dir, commit_id, embedder, vectors_ready, state, error, built_at, manifest FROM indexes WHERE alias = ?", alias).
			Scan(&r.Dir, &r.Commit, &r.Embedder, &vr, &r.State, &r.Error, &built, &man)
		if errors.Is(err, sql.ErrNoRows) {
			return row{State: "none"}, nil
		}
		r.VectorsReady = vr == 1
		r.BuiltAt = built.String
		json.Unmarshal([]byte(man), &r.Manifest)
		return r, err
	})
}

func (m *Manager) exec(ctx context.Context, q string, args ...any) error {
	_, err := m.db.ExecContext(context.WithoutCancel(ctx), q, args...)
	m.current.Forget()
	return err
}

// Index builds the index of commit (checked out at snapshot) for alias and
// publishes it: the lexical parts first, then the vectors. full ignores
// the previous build. Progress goes from 0 to 100.
func (m *Manager) Index(ctx context.Context, alias, commit, snapshot, gitDir string, full bool, progress Progress) (*Manifest, error) {
	return m.index(ctx, alias, buildRequest{snapshot: snapshot, gitDir: gitDir, commit: commit}, full, progress)
}

// IndexTree indexes a tree that is not a git commit (the catalog): entries
// are its files with their git blob ids, commit is a name for the tree.
// A tree already served with current vectors is not rebuilt.
func (m *Manager) IndexTree(ctx context.Context, alias, commit, snapshot string, entries []gitcli.TreeEntry) error {
	if r, err := m.load(ctx, alias); err == nil && r.Dir != "" && r.Commit == commit && r.VectorsReady &&
		r.Embedder == m.emb.ID() && r.Manifest.Version == FormatVersion {
		return nil
	}
	if entries == nil {
		entries = []gitcli.TreeEntry{}
	}
	_, err := m.index(ctx, alias, buildRequest{snapshot: snapshot, commit: commit, entries: entries}, false, func(int, string) {})
	return err
}

func (m *Manager) index(ctx context.Context, alias string, req buildRequest, full bool, progress Progress) (*Manifest, error) {
	commit, snapshot := req.commit, req.snapshot
	lk, _ := m.locks.LoadOrStore(alias, &sync.Mutex{})
	lk.(*sync.Mutex).Lock()
	defer lk.(*sync.Mutex).Unlock()

	prev, err := m.load(ctx, alias)
	if err != nil {
		return nil, err
	}
	prevDir := ""
	if !full && prev.Dir != "" {
		if _, err := os.Stat(filepath.Join(m.indexDir(alias), prev.Dir, "chunks.db")); err == nil {
			prevDir = filepath.Join(m.indexDir(alias), prev.Dir)
		}
	}
	if err := m.exec(ctx, `INSERT INTO indexes(alias, state) VALUES(?, 'building') ON CONFLICT(alias) DO UPDATE SET state = 'building', error = ''`, alias); err != nil {
		return nil, err
	}
	name := short(commit) + "-" + strings.ToLower(rand.Text()[:6])
	out := filepath.Join(m.indexDir(alias), name)
	if err := os.MkdirAll(m.indexDir(alias), 0o755); err != nil {
		return nil, err
	}
	req.out, req.prev = out, prevDir
	man, err := m.buildLexical(ctx, req, func(p int, msg string) {
		progress(p*70/100, msg)
	})
	if err != nil {
		state := "ready"
		if prev.Dir == "" {
			state = "failed"
		}
		m.exec(ctx, "UPDATE indexes SET state = ?, error = ? WHERE alias = ?", state, err.Error(), alias)
		return nil, err
	}
	man.Embedder, man.Dim = m.emb.ID(), m.emb.Dim()
	// Publish the lexical index at once only when semantic search has
	// nothing better to serve meanwhile; otherwise keep the previous build
	// (with its vectors) until this one is complete.
	if prev.Dir == "" || !prev.VectorsReady {
		m.preload(out, man, false)
		if err := m.publish(ctx, alias, name, man, false); err != nil {
			return nil, err
		}
		progress(72, "lexical index published; computing embeddings")
	} else {
		progress(72, "computing embeddings")
	}
	if err := m.buildVectors(ctx, out, prevDir, prev, snapshot, man, func(p int, msg string) {
		progress(72+p*27/100, msg)
	}); err != nil {
		// Search keeps working on what is published; the status says why
		// vectors are missing.
		m.exec(ctx, "UPDATE indexes SET state = 'ready', error = ? WHERE alias = ?", "embeddings: "+err.Error(), alias)
		return man, fmt.Errorf("embeddings: %w", err)
	}
	man.DiskBytes = dirSize(out)
	writeManifest(out, man)
	m.preload(out, man, true)
	if err := m.publish(ctx, alias, name, man, true); err != nil {
		return nil, err
	}
	m.evictOthers(alias, out)
	m.prune(alias, name, prev.Dir)
	return man, nil
}

// preload opens build dir into the reader cache before it is published,
// so that no search pays for loading it (a few hundred milliseconds on a
// large repository). Errors are left for Open to report.
func (m *Manager) preload(dir string, man *Manifest, withVectors bool) {
	rd, err := openReader(dir, withVectors)
	if err != nil {
		return
	}
	rd.Commit, rd.Embedder, rd.VectorsReady = man.Commit, man.Embedder, rd.vecs != nil
	rd.refs.Add(1) // the cache's own reference
	rd.lastUsed.Store(time.Now().UnixNano())
	m.mu.Lock()
	defer m.mu.Unlock()
	if old := m.readers[dir]; old != nil {
		old.release()
	}
	m.readers[dir] = rd
	m.trimLocked(dir)
}

// trimLocked closes the least recently used cached readers (other than
// keep's) while the cache holds more heap than the budget. A reader still
// used by a search is closed when that search releases it.
func (m *Manager) trimLocked(keep string) {
	var total int64
	for _, r := range m.readers {
		total += r.memBytes
	}
	for total > m.cfg.ReaderMemoryBytes {
		var oldest string
		for d, r := range m.readers {
			if d != keep && (oldest == "" || r.lastUsed.Load() < m.readers[oldest].lastUsed.Load()) {
				oldest = d
			}
		}
		if oldest == "" {
			return
		}
		r := m.readers[oldest]
		delete(m.readers, oldest)
		total -= r.memBytes
		r.release()
	}
}

// evictOthers drops alias's cached readers other than dir's: those builds
// are superseded, and searches still using one hold their own reference.
// Keeping them until the next build prunes them would hold their vectors
// in memory for nothing.
func (m *Manager) evictOthers(alias, dir string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evictLocked(alias, dir)
}

func (m *Manager) evictLocked(alias, dir string) {
	prefix := m.indexDir(alias) + string(os.PathSeparator)
	for d, old := range m.readers {
		if d != dir && strings.HasPrefix(d, prefix) {
			delete(m.readers, d)
			old.release()
		}
	}
}

func (m *Manager) publish(ctx context.Context, alias, dir string, man *Manifest, vectors bool) error {
	b, _ := json.Marshal(man)
	vr := 0
	if vectors {
		vr = 1
	}
	return m.exec(ctx, `UPDATE indexes SET dir = ?, commit_id = ?, embedder = ?, vectors_ready = ?, state = 'ready', error = '', built_at = ?, manifest = ? WHERE alias = ?`,
		dir, man.Commit, man.Embedder, vr, man.BuiltAt, string(b), alias)
}

// prune removes builds other than the current and the previous one (kept
// for searches that opened it just before the switch), and leftovers of
// interrupted builds.
func (m *Manager) prune(alias string, keep ...string) {
	entries, _ := os.ReadDir(m.indexDir(alias))
	for _, e := range entries {
		if !e.IsDir() || containsName(keep, e.Name()) {
			continue
		}
		dir := filepath.Join(m.indexDir(alias), e.Name())
		m.mu.Lock()
		if r := m.readers[dir]; r != nil {
			delete(m.readers, dir)
			r.release()
		}
		m.mu.Unlock()
		os.RemoveAll(dir)
	}
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s && s != "" {
			return true
		}
	}
	return false
}

// Forget drops alias's index record (its files go with the repository).
func (m *Manager) Forget(ctx context.Context, alias string) error {
	m.mu.Lock()
	for dir, r := range m.readers {
		if strings.HasPrefix(dir, m.indexDir(alias)+string(os.PathSeparator)) {
			delete(m.readers, dir)
			r.release()
		}
	}
	m.mu.Unlock()
	return m.exec(ctx, "DELETE FROM indexes WHERE alias = ?", alias)
}

// Status is what get_index_status reports.
type Status struct {
	State        string    `json:"state"` // none, building, ready, failed
	Commit       string    `json:"commit"`
	VectorsReady bool      `json:"vectors_ready"`
	Embedder     string    `json:"embedder"`
	BuiltAt      string    `json:"built_at"`
	Error        string    `json:"error,omitempty"`
	Manifest     *Manifest `json:"manifest,omitempty"`
}

// Status returns alias's index state.
func (m *Manager) Status(ctx context.Context, alias string) (Status, error) {
	r, err := m.load(ctx, alias)
	if err != nil {
		return Status{}, err
	}
	st := Status{State: r.State, Commit: r.Commit, VectorsReady: r.VectorsReady, Embedder: r.Embedder, BuiltAt: r.BuiltAt, Error: r.Error}
	if r.Dir != "" {
		man := r.Manifest
		st.Manifest = &man
	}
	return st, nil
}

// Outdated reports whether alias has a published index in another format
// than this version writes (so it cannot be served and must be rebuilt).
func (m *Manager) Outdated(ctx context.Context, alias string) bool {
	r, err := m.load(ctx, alias)
	return err == nil && r.Dir != "" && r.Manifest.Version != FormatVersion
}

// ForeignVectors reports whether alias's published vectors were computed
// by another embedder than the configured one (its searches fall back to
// lexical results until a build re-embeds them).
func (m *Manager) ForeignVectors(ctx context.Context, alias string) bool {
	r, err := m.load(ctx, alias)
	return err == nil && r.Dir != "" && r.VectorsReady && r.Embedder != m.emb.ID()
}

// ErrNotIndexed is returned when a repository has no published index.
var ErrNotIndexed = errors.New("not indexed")

// Open returns a reader of alias's published index. Call Release when done.
func (m *Manager) Open(ctx context.Context, alias string) (*Reader, error) {
	r, err := m.load(ctx, alias)
	if err != nil {
		return nil, err
	}
	if r.Dir == "" {
		if r.State == "building" {
			return nil, fmt.Errorf("%w: the first index of %s is being built; try again when its job has completed", ErrNotIndexed, alias)
		}
		return nil, fmt.Errorf("%w: %s has no index (state %s)", ErrNotIndexed, alias, r.State)
	}
	if r.Manifest.Version != FormatVersion {
		return nil, fmt.Errorf("%w: the index of %s was built by another cidx version (format %d, this one reads %d); it is rebuilt at server start, or run trigger_reindex", ErrNotIndexed, alias, r.Manifest.Version, FormatVersion)
	}
	dir := filepath.Join(m.indexDir(alias), r.Dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	rd := m.readers[dir]
	if rd == nil || rd.vecs == nil && r.VectorsReady {
		if rd != nil {
			delete(m.readers, dir)
			rd.release()
		}
		rd, err = openReader(dir, r.VectorsReady)
		if err != nil {
			return nil, err
		}
		// Set once, before any search sees the reader: a build's commit
		// and embedder never change, and a build whose vectors become
		// ready gets a new reader.
		rd.Commit, rd.VectorsReady, rd.Embedder = r.Commit, r.VectorsReady && rd.vecs != nil, r.Embedder
		rd.refs.Add(1) // the cache's own reference
		m.readers[dir] = rd
		m.evictLocked(alias, dir)
		m.trimLocked(dir)
	}
	rd.refs.Add(1)
	rd.lastUsed.Store(time.Now().UnixNano())
	return rd, nil
}

// buildVectors writes vectors.f32 of the build in dir: vectors of chunks
// unchanged since the previous build (same embedder) are carried over by
// content hash, the rest are embedded.
func (m *Manager) buildVectors(ctx context.Context, dir, prevDir string, prev row, snapshot string, man *Manifest, progress Progress) error {
	start := time.Now()
	db, err := openChunksDB(filepath.Join(dir, "chunks.db"), true)
	if err != nil {
		return err
	}
	defer db.Close()
	type ch struct {
		rowid              int64
		path, symbol, hash string
		start, end         int
	}
	rows, err := db.QueryContext(ctx, "SELECT c.rowid, f.path, c.symbol, c.content_hash, c.start_offset, c.end_offset FROM chunks c JOIN files f ON f.id = c.file ORDER BY c.rowid")
	if err != nil {
		return err
	}
	var all []ch
	for rows.Next() {
		var c ch
		rows.Scan(&c.rowid, &c.path, &c.symbol, &c.hash, &c.start, &c.end)
		all = append(all, c)
	}
	rows.Close()

	// Vectors of the previous build by content hash, when it used the same
	// embedder: they are carried over, not recomputed.
	var prevVecs *vectors
	prevOrd := map[string]int{}
	if prevDir != "" && prev.Embedder == m.emb.ID() {
		if prevVecs, prevOrd, err = prevVectorsByHash(ctx, prevDir); err == nil {
			defer prevVecs.close()
		}
	}
	embedded := map[string][]float32{}
	var missing []int
	for i, c := range all {
		if _, ok := prevOrd[c.hash]; ok {
			continue
		}
		if _, ok := embedded[c.hash]; !ok {
			embedded[c.hash] = nil
			missing = append(missing, i)
		}
	}
	root, err := os.OpenRoot(snapshot)
	if err != nil {
		return err
	}
	defer root.Close()
	// Embed in batches, reading each file once per batch.
	const batch = 256
	var cache struct {
		path string
		data []byte
	}
	for b := 0; b < len(missing); b += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		idx := missing[b:min(b+batch, len(missing))]
		texts := make([]string, len(idx))
		for j, i := range idx {
			c := all[i]
			if cache.path != c.path {
				data, err := root.ReadFile(c.path)
				if err != nil {
					return fmt.Errorf("read %s: %w", c.path, err)
				}
				cache.path, cache.data = c.path, data
			}
			texts[j] = embedText(c.path, c.symbol, cache.data[min(c.start, len(cache.data)):min(c.end, len(cache.data))])
		}
		vecs, err := m.emb.Embed(ctx, texts, embed.Document)
		if err != nil {
			return err
		}
		for j, i := range idx {
			embedded[all[i].hash] = vecs[j]
		}
		progress(100*(b+len(idx))/max(1, len(missing)), fmt.Sprintf("embedded %d of %d new chunks", b+len(idx), len(missing)))
	}
	out := make([]vecRow, len(all))
	for i, c := range all {
		if ord, ok := prevOrd[c.hash]; ok {
			out[i] = vecRow{rowid: c.rowid, from: prevVecs, ord: ord}
		} else {
			out[i] = vecRow{rowid: c.rowid, v: embedded[c.hash]}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rowid < out[j].rowid })
	if err := writeVectors(filepath.Join(dir, "vectors.bin"), m.emb.Dim(), out, m.cfg.Int8Vectors); err != nil {
		return err
	}
	man.Embedded = len(missing)
	man.VectorsMS = time.Since(start).Milliseconds()
	return nil
}

// embedText is what a chunk is embedded as: where it lives and what it
// defines help as much as its body. Bodies are capped: embedders have
// input limits and the head of a chunk carries most of its meaning.
func embedText(path, symbol string, body []byte) string {
	const maxBody = 6000
	if len(body) > maxBody {
		body = body[:maxBody]
	}
	var b strings.Builder
	b.WriteString(path)
	if symbol != "" {
		b.WriteString(" ")
		b.WriteString(symbol)
	}
	b.WriteString("\n")
	b.Write(body)
	return strings.ToValidUTF8(b.String(), "")
}

// prevVectorsByHash maps the previous build's chunk content hashes to
// their rows in its vector file, which it returns open (not decoded).
func prevVectorsByHash(ctx context.Context, prevDir string) (*vectors, map[string]int, error) {
	v, err := mapVectors(filepath.Join(prevDir, "vectors.bin"), false)
	if err != nil {
		return nil, nil, err
	}
	db, err := openChunksDB(filepath.Join(prevDir, "chunks.db"), true)
	if err != nil {
		v.close()
		return nil, nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT rowid, content_hash FROM chunks ORDER BY rowid")
	if err != nil {
		v.close()
		return nil, nil, err
	}
	defer rows.Close()
	// Both lists are in rowid order: walk them together.
	out := make(map[string]int, v.count)
	ord := 0
	for rows.Next() {
		var id int64
		var h string
		if err := rows.Scan(&id, &h); err != nil {
			v.close()
			return nil, nil, err
		}
		for ord < v.count && v.rowids[ord] < id {
			ord++
		}
		if ord < v.count && v.rowids[ord] == id {
			out[h] = ord
		}
	}
	return v, out, rows.Err()
}

// IndexCommit is Index for callers that need only success or failure (the
// repos package's Indexer).
func (m *Manager) IndexCommit(ctx context.Context, alias, commit, snapshot, gitDir string, full bool, progress func(int, string)) error {
	_, err := m.Index(ctx, alias, commit, snapshot, gitDir, full, progress)
	return err
}
