package index

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/cidx/cidx/internal/codetok"
)

// chunks.db holds, per build: the indexed files (path -> blob), their
// chunks (positions and hashes; the text stays in the snapshot), their
// symbols, and a contentless FTS5 index over the chunks' terms for BM25.
const chunksSchema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
	path     TEXT PRIMARY KEY,
	blob     TEXT NOT NULL,
	language TEXT NOT NULL,
	size     INTEGER NOT NULL,
	shard    INTEGER NOT NULL
);
CREATE TABLE skipped (
	path   TEXT PRIMARY KEY,
	blob   TEXT NOT NULL,
	reason TEXT NOT NULL,
	size   INTEGER NOT NULL
);
CREATE TABLE chunks (
	rowid        INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	path         TEXT NOT NULL,
	idx          INTEGER NOT NULL,
	start_line   INTEGER NOT NULL,
	end_line     INTEGER NOT NULL,
	start_offset INTEGER NOT NULL,
	end_offset   INTEGER NOT NULL,
	language     TEXT NOT NULL,
	kind         TEXT NOT NULL,
	symbol       TEXT NOT NULL,
	content_hash TEXT NOT NULL,
	token_count  INTEGER NOT NULL,
	created_at   TEXT NOT NULL
);
CREATE INDEX chunks_path ON chunks(path);
CREATE TABLE symbols (
	path         TEXT NOT NULL,
	name         TEXT NOT NULL,
	kind         TEXT NOT NULL,
	line         INTEGER NOT NULL,
	start_offset INTEGER NOT NULL,
	end_offset   INTEGER NOT NULL
);
CREATE INDEX symbols_path ON symbols(path);
CREATE VIRTUAL TABLE fts USING fts5(body, path, symbol, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0');
CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, 'row');
`

func openChunksDB(path string, readOnly bool) (*sql.DB, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=synchronous(OFF)&_pragma=journal_mode(OFF)&_pragma=temp_store(MEMORY)&_pragma=cache_size(-65536)"
	if readOnly {
		// Published builds never change: immutable skips all locking.
		dsn = "file:" + path + "?mode=ro&immutable=1&_pragma=cache_size(-16384)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !readOnly {
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxOpenConns(8)
	}
	return db, nil
}

// uniqueTerms returns the text's terms, each once, in order.
func uniqueTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range codetok.Terms(text) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// orQuery is an FTS5 query matching any of terms, so that BM25 ranks
// chunks by how many of the rarer terms they hold.
func orQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
	}
	return strings.Join(parts, " OR ")
}

func joinTerms(s string) string { return strings.Join(codetok.Terms(s), " ") }

func setMeta(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	return err
}

func getMeta(ctx context.Context, db *sql.DB, key string) string {
	var v string
	db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	return v
}
