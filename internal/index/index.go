// Package index builds and serves the search index of a repository
// snapshot: trigram shards (regex and substring search), chunk metadata in
// SQLite, a BM25 index over the chunks (package bm25), and embedding
// vectors in a flat file searched exactly.
//
// Each build lives in its own directory under DATA_DIR/repos/ALIAS/index/
// and is published by switching one database row, so readers always see a
// complete index: a crash mid-build leaves only an unreferenced directory,
// and the previous build keeps serving. Builds are incremental: files whose
// git blob is unchanged are not read again, trigram shards without changes
// are hard-linked, and chunks are embedded once per content hash and
// embedder.
//
// A build publishes in two steps: the lexical parts (trigram and BM25)
// first, then the vectors, so that lexical search is available while
// embeddings are being computed.
package index

import (
	"path"
	"strings"
)

// FormatVersion changes when the on-disk layout changes; a build of
// another version is never reused incrementally, and is not served: the
// repository needs a reindex (version 2 replaced FTS5 by bm25.bin).
const FormatVersion = 2

// Config says what is indexed.
type Config struct {
	// MaxFileBytes skips larger files (reported). Default 1 MiB.
	MaxFileBytes int64 `yaml:"max_file_bytes" json:"max_file_bytes"`
	// Exclude lists what users expect skipped: an entry ending in "/" is a
	// directory name matched at any depth ("vendor/"), an entry with a "/"
	// elsewhere is matched against the whole path, and any other entry
	// against the file name ("*.min.js"), with path.Match syntax.
	Exclude []string `yaml:"exclude" json:"exclude"`
	// IndexGenerated also indexes files marked as generated ("Code
	// generated ... DO NOT EDIT.", "@generated"); off by default.
	IndexGenerated bool `yaml:"index_generated" json:"index_generated"`
	// Int8Vectors stores vectors quantised to int8 on disk (4x smaller;
	// they are decoded into memory when a build is opened).
	Int8Vectors bool `yaml:"int8_vectors" json:"int8_vectors"`
	// ReaderMemoryBytes bounds the heap memory of the open builds kept
	// between searches (decoded vectors, chunk tables): past it, the least
	// recently used are closed and reopened on demand. Default 2 GiB.
	ReaderMemoryBytes int64 `yaml:"-" json:"-"`
}

// DefaultExclude is used when Config.Exclude is empty.
var DefaultExclude = []string{
	"vendor/", "node_modules/", "third_party/", "bower_components/", ".yarn/",
	"*.min.js", "*.min.css", "*.map",
	"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "go.sum", "Cargo.lock", "poetry.lock", "composer.lock", "Gemfile.lock",
}

func (c Config) withDefaults() Config {
	if c.MaxFileBytes <= 0 {
		c.MaxFileBytes = 1 << 20
	}
	if len(c.Exclude) == 0 {
		c.Exclude = DefaultExclude
	}
	if c.ReaderMemoryBytes <= 0 {
		c.ReaderMemoryBytes = 2 << 30
	}
	return c
}

// excluded reports whether p (a slash path from the repository root)
// matches one of the exclude entries.
func excluded(p string, patterns []string) bool {
	base := path.Base(p)
	for _, pat := range patterns {
		switch {
		case strings.HasSuffix(pat, "/"):
			dir := strings.TrimSuffix(pat, "/")
			if strings.HasPrefix(p, dir+"/") || strings.Contains(p, "/"+dir+"/") {
				return true
			}
		case strings.Contains(pat, "/"):
			if ok, _ := path.Match(pat, p); ok {
				return true
			}
		default:
			if ok, _ := path.Match(pat, base); ok {
				return true
			}
		}
	}
	return false
}

// Skip is a file left out of the index, and why.
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"` // too_large, binary, excluded, generated
	Size   int64  `json:"size,omitempty"`
}

// Manifest describes one build; it is stored beside it and in the database.
type Manifest struct {
	Version      int            `json:"version"`
	Commit       string         `json:"commit"`
	Embedder     string         `json:"embedder"`
	Dim          int            `json:"dim"`
	Files        int            `json:"files"`
	Chunks       int            `json:"chunks"`
	Bytes        int64          `json:"bytes"`
	Skipped      map[string]int `json:"skipped"`
	SkippedFiles []Skip         `json:"skipped_files,omitempty"` // the first 100
	Incremental  bool           `json:"incremental"`
	ReusedFiles  int            `json:"reused_files"`
	ReadFiles    int            `json:"read_files"`
	Embedded     int            `json:"embedded_chunks"` // chunks embedded by this build (the rest were cached)
	BuiltAt      string         `json:"built_at"`
	LexicalMS    int64          `json:"lexical_ms"`
	VectorsMS    int64          `json:"vectors_ms"`
	DiskBytes    int64          `json:"disk_bytes"`
	Int8         bool           `json:"int8_vectors"`
}
