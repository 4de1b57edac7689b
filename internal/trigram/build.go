package trigram

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/sourcegraph/zoekt"
	"github.com/sourcegraph/zoekt/index"
)

// Symbol is a definition inside a document: the byte range of its name.
type Symbol struct {
	Name, Kind             string
	StartOffset, EndOffset int
}

// Doc is one file of the snapshot. Path is a clean slash-separated path
// relative to the repository root.
type Doc struct {
	Path     string
	Content  []byte
	Language string // optional; zoekt guesses it (go-enry) when empty
	Symbols  []Symbol
}

// BuildOptions tunes Build and Update.
type BuildOptions struct {
	// Shards is the number of shards documents are spread over by a stable
	// hash of their path (ShardOf). Default 8. Update keeps the shard
	// count of the index it starts from.
	Shards int
	// Parallelism is the number of shards built at once. Default
	// GOMAXPROCS.
	Parallelism int
	// MaxDeltaBytes bounds the delta shard of Update: while the changed
	// documents since the last full shard rebuild hold at most this much
	// content, Update rebuilds only the delta shard; past it, it folds
	// them back into their hash shards. 0 means max(1 MiB, content /
	// (2 * shards)); negative disables the delta shard.
	MaxDeltaBytes int64
}

// DefaultShards is the shard count used when BuildOptions.Shards is 0.
// Each shard repeats the trigram dictionary of its files; on the Go tree
// 8 shards take 4.4 MB less than 16, and an update after one changed file
// rebuilds an eighth of the files, which still fits the 2 s budget.
const DefaultShards = 8

const (
	manifestName  = "manifest.json"
	formatVersion = 2 // 2: delta shard and hidden documents
	// repoName is the repository name recorded in every zoekt shard; one
	// index holds exactly one repository snapshot.
	repoName = "cidx"
	rawMagic = "CIDXRAW1"
	// maxShardBytes keeps a shard file (about 3x its content) below the
	// 4 GiB zoekt can address.
	maxShardBytes = 1 << 30
)

// manifest describes an index directory. It is written last, so a
// directory with a manifest is complete.
type manifest struct {
	Format int         `json:"format"`
	Shards []shardMeta `json:"shards"`
	// Delta holds the current version of every document changed since the
	// hash shards were built; they hide their own copies (Hidden).
	Delta *shardMeta `json:"delta,omitempty"`
}

type shardMeta struct {
	// Docs counts documents stored in the zoekt file, RawDocs those stored
	// in the .raw side file (see writeRaw).
	Docs    int   `json:"docs"`
	RawDocs int   `json:"raw_docs,omitempty"`
	Bytes   int64 `json:"content_bytes"`
	// Hidden lists paths of a hash shard whose copy here is out of date:
	// changed (the delta has them) or removed.
	Hidden []string `json:"hidden,omitempty"`
	// Paths lists the delta shard's documents' paths, present or removed.
	Paths []string `json:"paths,omitempty"`
}

// deltaShard numbers the delta shard in file names.
const deltaShard = -1

func shardFile(s int) string {
	if s == deltaShard {
		return "delta.zoekt"
	}
	return fmt.Sprintf("shard-%04d.zoekt", s)
}

func rawFile(s int) string {
	if s == deltaShard {
		return "delta.raw"
	}
	return fmt.Sprintf("shard-%04d.raw", s)
}

// ShardOf returns the shard a path belongs to: FNV-1a of the path modulo
// shards. It never changes for a given path and shard count, which is what
// lets Update reuse untouched shards.
func ShardOf(p string, shards int) int {
	if shards <= 0 {
		shards = DefaultShards
	}
	h := fnv.New64a()
	h.Write([]byte(p))
	return int(h.Sum64() % uint64(shards))
}

func (o BuildOptions) withDefaults() BuildOptions {
	if o.Shards <= 0 {
		o.Shards = DefaultShards
	}
	if o.Parallelism <= 0 {
		o.Parallelism = runtime.GOMAXPROCS(0)
	}
	return o
}

func validPath(p string) bool {
	return p != "" && p != "." && !path.IsAbs(p) && path.Clean(p) == p &&
		p != ".." && !(len(p) > 2 && p[:3] == "../")
}

// Build writes a complete index of docs into dir, which must not exist. The
// index is assembled in a temporary sibling directory and renamed into
// place at the end, so dir either does not exist or is complete.
func Build(ctx context.Context, dir string, docs []Doc, o BuildOptions) error {
	o = o.withDefaults()
	buckets := make([][]*Doc, o.Shards)
	seen := make(map[string]bool, len(docs))
	for i := range docs {
		d := &docs[i]
		if !validPath(d.Path) {
			return fmt.Errorf("trigram: invalid document path %q", d.Path)
		}
		if seen[d.Path] {
			return fmt.Errorf("trigram: duplicate document path %q", d.Path)
		}
		seen[d.Path] = true
		s := ShardOf(d.Path, o.Shards)
		buckets[s] = append(buckets[s], d)
	}
	return assemble(ctx, dir, o.Shards, o.Parallelism, func(ctx context.Context, tmp string, s int) (shardMeta, error) {
		return buildShard(ctx, tmp, s, buckets[s])
	}, nil)
}

// Changes says what Update must apply to an index.
type Changes struct {
	// Paths are the documents changed, added or removed since the index
	// was built.
	Paths []string
	// Shard returns the complete new document set of hash shard s: every
	// current document with ShardOf(path) == s. It may be called from
	// several goroutines at once.
	Shard func(s int) ([]Doc, error)
	// Docs returns the current documents among paths; a path it leaves out
	// is a removed document.
	Docs func(paths []string) ([]Doc, error)
}

// Update builds newDir (which must not exist) from the index in oldDir.
//
// Changed documents go to a delta shard, rebuilt on every update from the
// documents changed since the hash shards were last rebuilt, and the hash
// shards hide their stale copies: every hash shard is hard-linked (or
// copied when linking fails), and an update costs the size of the delta,
// not of a shard. When the delta grows past BuildOptions.MaxDeltaBytes (or
// hides too many documents), Update folds it back: the hash shards with
// hidden documents are rebuilt from Changes.Shard, the others linked, and
// the delta is dropped.
func Update(ctx context.Context, oldDir, newDir string, ch Changes, o BuildOptions) error {
	m, err := readManifest(oldDir)
	if err != nil {
		return err
	}
	n := len(m.Shards)
	if o.Shards != 0 && o.Shards != n {
		return fmt.Errorf("trigram: index in %s has %d shards, options ask for %d; rebuild with Build instead", oldDir, n, o.Shards)
	}
	o.Shards = n
	o = o.withDefaults()

	// What each hash shard hides after this update, and what the delta
	// shard must hold: the earlier delta's paths plus the new changes.
	hidden := make([]map[string]bool, n)
	var total int64
	var nDocs, nHidden int
	for s, sm := range m.Shards {
		hidden[s] = map[string]bool{}
		for _, p := range sm.Hidden {
			hidden[s][p] = true
		}
		total += sm.Bytes
		nDocs += sm.Docs + sm.RawDocs
	}
	deltaSet := map[string]bool{}
	if m.Delta != nil {
		for _, p := range m.Delta.Paths {
			deltaSet[p] = true
		}
	}
	for _, p := range ch.Paths {
		if !validPath(p) {
			return fmt.Errorf("trigram: invalid document path %q", p)
		}
		deltaSet[p] = true
		hidden[ShardOf(p, n)][p] = true
	}
	for _, h := range hidden {
		nHidden += len(h)
	}
	deltaPaths := make([]string, 0, len(deltaSet))
	for p := range deltaSet {
		deltaPaths = append(deltaPaths, p)
	}
	sort.Strings(deltaPaths)

	limit := o.MaxDeltaBytes
	if limit == 0 {
		limit = max(1<<20, total/int64(2*n))
	}
	if limit > 0 && ch.Docs != nil && nHidden <= max(64, nDocs/10) {
		docs, err := ch.Docs(deltaPaths)
		if err != nil {
			return fmt.Errorf("trigram: changed documents: %w", err)
		}
		var size int64
		ptrs := make([]*Doc, len(docs))
		seen := make(map[string]bool, len(docs))
		for i := range docs {
			d := &docs[i]
			if !deltaSet[d.Path] || seen[d.Path] {
				return fmt.Errorf("trigram: document %q was not asked for, or given twice", d.Path)
			}
			seen[d.Path] = true
			size += int64(len(d.Content))
			ptrs[i] = d
		}
		if size <= limit {
			return assemble(ctx, newDir, n, o.Parallelism, func(ctx context.Context, tmp string, s int) (shardMeta, error) {
				meta, err := linkShard(oldDir, tmp, s, m.Shards[s])
				meta.Hidden = sortedKeys(hidden[s])
				return meta, err
			}, func(ctx context.Context, tmp string) (*shardMeta, error) {
				meta, err := buildShard(ctx, tmp, deltaShard, ptrs)
				meta.Paths = deltaPaths
				return &meta, err
			})
		}
	}

	// Fold the delta back: rebuild every hash shard that hides something.
	return assemble(ctx, newDir, n, o.Parallelism, func(ctx context.Context, tmp string, s int) (shardMeta, error) {
		if len(hidden[s]) == 0 {
			return linkShard(oldDir, tmp, s, m.Shards[s])
		}
		if ch.Shard == nil {
			return shardMeta{}, fmt.Errorf("trigram: shard %d must be rebuilt, and Changes.Shard is not set", s)
		}
		docs, err := ch.Shard(s)
		if err != nil {
			return shardMeta{}, fmt.Errorf("trigram: documents of shard %d: %w", s, err)
		}
		ptrs := make([]*Doc, len(docs))
		seen := make(map[string]bool, len(docs))
		for i := range docs {
			d := &docs[i]
			if !validPath(d.Path) {
				return shardMeta{}, fmt.Errorf("trigram: invalid document path %q", d.Path)
			}
			if got := ShardOf(d.Path, n); got != s {
				return shardMeta{}, fmt.Errorf("trigram: document %q belongs to shard %d, was given for shard %d", d.Path, got, s)
			}
			if seen[d.Path] {
				return shardMeta{}, fmt.Errorf("trigram: duplicate document path %q", d.Path)
			}
			seen[d.Path] = true
			ptrs[i] = d
		}
		return buildShard(ctx, tmp, s, ptrs)
	}, nil)
}

// linkShard reuses hash shard s of oldDir in tmp.
func linkShard(oldDir, tmp string, s int, old shardMeta) (shardMeta, error) {
	if err := linkOrCopy(filepath.Join(oldDir, shardFile(s)), filepath.Join(tmp, shardFile(s))); err != nil {
		return shardMeta{}, err
	}
	if old.RawDocs > 0 {
		if err := linkOrCopy(filepath.Join(oldDir, rawFile(s)), filepath.Join(tmp, rawFile(s))); err != nil {
			return shardMeta{}, err
		}
	}
	return old, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// assemble creates dir through a temporary sibling: it runs makeShard for
// every shard (parallelism at a time) and makeDelta (if not nil), writes
// the manifest, syncs and renames.
func assemble(ctx context.Context, dir string, shards, parallelism int, makeShard func(ctx context.Context, tmp string, s int) (shardMeta, error),
	makeDelta func(ctx context.Context, tmp string) (*shardMeta, error)) (err error) {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("trigram: %s already exists", dir)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()

	m := manifest{Format: formatVersion, Shards: make([]shardMeta, shards)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for w := 0; w < min(parallelism, shards); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range next {
				meta, err := makeShard(ctx, tmp, s)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				m.Shards[s] = meta
				mu.Unlock()
			}
		}()
	}
feed:
	for s := 0; s < shards; s++ {
		select {
		case next <- s:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if makeDelta != nil {
		if m.Delta, err = makeDelta(ctx, tmp); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	buf, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(tmp, manifestName), buf); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return syncDir(parent)
}

// buildShard writes the zoekt file (and, if needed, the .raw file) of one
// shard into dir.
func buildShard(ctx context.Context, dir string, s int, docs []*Doc) (shardMeta, error) {
	if err := ctx.Err(); err != nil {
		return shardMeta{}, err
	}
	// Sorted input makes shard files reproducible for a given snapshot.
	sort.Slice(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
	b, err := index.NewShardBuilder(&zoekt.Repository{Name: repoName})
	if err != nil {
		return shardMeta{}, err
	}
	var meta shardMeta
	var raw []*Doc
	for i, d := range docs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return shardMeta{}, err
			}
		}
		meta.Bytes += int64(len(d.Content))
		if bytes.IndexByte(d.Content, 0) >= 0 {
			// zoekt replaces the content of any document containing a NUL
			// byte with a "NOT-INDEXED" marker. The caller decided this is
			// text (its binary check only looks at a prefix), so keep it
			// beside the shard and always treat it as a candidate.
			raw = append(raw, d)
			continue
		}
		secs, metas := symbolSections(d)
		zd := index.Document{
			Name:            d.Path,
			Content:         d.Content,
			Language:        d.Language,
			Symbols:         secs,
			SymbolsMetaData: metas,
		}
		if err := b.Add(zd); err != nil {
			return shardMeta{}, fmt.Errorf("trigram: indexing %s: %w", d.Path, err)
		}
		meta.Docs++
	}
	if meta.Bytes > maxShardBytes {
		return shardMeta{}, fmt.Errorf("trigram: shard %d holds %d MB of content; zoekt shard files are limited to 4 GiB, use more shards", s, meta.Bytes>>20)
	}
	if err := writeWith(filepath.Join(dir, shardFile(s)), b.Write); err != nil {
		return shardMeta{}, err
	}
	if len(raw) > 0 {
		meta.RawDocs = len(raw)
		if err := writeWith(filepath.Join(dir, rawFile(s)), func(w io.Writer) error { return writeRaw(w, raw) }); err != nil {
			return shardMeta{}, err
		}
	}
	return meta, nil
}

// symbolSections converts caller symbols to zoekt sections, dropping the
// ones zoekt would reject (out of range, not on rune boundaries,
// overlapping an earlier one) instead of failing the whole build.
func symbolSections(d *Doc) ([]index.DocumentSection, []*zoekt.Symbol) {
	if len(d.Symbols) == 0 {
		return nil, nil
	}
	syms := make([]Symbol, len(d.Symbols))
	copy(syms, d.Symbols)
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].StartOffset < syms[j].StartOffset })
	c := d.Content
	boundary := func(off int) bool { return off == len(c) || utf8.RuneStart(c[off]) }
	var secs []index.DocumentSection
	var metas []*zoekt.Symbol
	last := 0
	for _, s := range syms {
		if s.StartOffset < last || s.EndOffset <= s.StartOffset || s.EndOffset > len(c) ||
			!boundary(s.StartOffset) || !boundary(s.EndOffset) {
			continue
		}
		secs = append(secs, index.DocumentSection{Start: uint32(s.StartOffset), End: uint32(s.EndOffset)})
		metas = append(metas, &zoekt.Symbol{Sym: s.Name, Kind: s.Kind})
		last = s.EndOffset
	}
	return secs, metas
}

// writeRaw stores documents as: magic, uvarint count, then per document
// uvarint len + path and uvarint len + content.
func writeRaw(w io.Writer, docs []*Doc) error {
	var buf []byte
	buf = append(buf, rawMagic...)
	buf = binary.AppendUvarint(buf, uint64(len(docs)))
	for _, d := range docs {
		buf = binary.AppendUvarint(buf, uint64(len(d.Path)))
		buf = append(buf, d.Path...)
		buf = binary.AppendUvarint(buf, uint64(len(d.Content)))
		if _, err := w.Write(buf); err != nil {
			return err
		}
		if _, err := w.Write(d.Content); err != nil {
			return err
		}
		buf = buf[:0]
	}
	_, err := w.Write(buf)
	return err
}

// parseRaw reads what writeRaw wrote; contents alias data.
func parseRaw(data []byte) ([]doc, error) {
	bad := errors.New("trigram: corrupt raw document file")
	if !bytes.HasPrefix(data, []byte(rawMagic)) {
		return nil, bad
	}
	data = data[len(rawMagic):]
	next := func() ([]byte, error) {
		n, k := binary.Uvarint(data)
		if k <= 0 || n > uint64(len(data)-k) {
			return nil, bad
		}
		b := data[k : k+int(n)]
		data = data[k+int(n):]
		return b, nil
	}
	count, k := binary.Uvarint(data)
	if k <= 0 {
		return nil, bad
	}
	data = data[k:]
	docs := make([]doc, 0, min(count, 1<<16))
	for i := uint64(0); i < count; i++ {
		p, err := next()
		if err != nil {
			return nil, err
		}
		c, err := next()
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc{path: string(p), content: c})
	}
	return docs, nil
}

func writeWith(name string, write func(io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	// Sync before the directory rename publishes the file: otherwise a
	// crash could leave a renamed directory with empty files.
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeFileSync(name string, data []byte) error {
	return writeWith(name, func(w io.Writer) error { _, err := w.Write(data); return err })
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeWith(dst, func(w io.Writer) error { _, err := io.Copy(w, in); return err })
}

func readManifest(dir string) (*manifest, error) {
	buf, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("trigram: reading index %s: %w", dir, err)
	}
	var m manifest
	if err := json.Unmarshal(buf, &m); err != nil {
		return nil, fmt.Errorf("trigram: reading index %s: %w", dir, err)
	}
	if m.Format != formatVersion || len(m.Shards) == 0 {
		return nil, fmt.Errorf("trigram: index %s has unsupported format %d", dir, m.Format)
	}
	return &m, nil
}
