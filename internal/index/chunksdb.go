package index

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cidx/cidx/internal/trigram"
)

// chunks.db holds, per build: the indexed files (path -> blob, with their
// symbols packed in a blob for rebuilding trigram shards), the files left
// out and why, and the chunks (positions and hashes; the text stays in the
// snapshot). Chunk rows are keyed by rowid, which bm25.bin and vectors.bin
// use as document id. Hashes and ids are stored as bytes: this table is a
// large part of the index on disk.
const chunksSchema = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
	id         INTEGER PRIMARY KEY,
	path       TEXT NOT NULL UNIQUE,
	blob       TEXT NOT NULL,
	language   TEXT NOT NULL,
	size       INTEGER NOT NULL,
	shard      INTEGER NOT NULL,
	indexed_at TEXT NOT NULL,
	symbols    BLOB,
	-- A file's chunks are inserted together: their rowids are this range.
	first_chunk INTEGER NOT NULL DEFAULT 0,
	last_chunk  INTEGER NOT NULL DEFAULT -1
);
CREATE TABLE skipped (
	path   TEXT PRIMARY KEY,
	blob   TEXT NOT NULL,
	reason TEXT NOT NULL,
	size   INTEGER NOT NULL
);
CREATE TABLE chunks (
	rowid        INTEGER PRIMARY KEY,
	id           BLOB NOT NULL UNIQUE,
	file         INTEGER NOT NULL,
	idx          INTEGER NOT NULL,
	start_line   INTEGER NOT NULL,
	end_line     INTEGER NOT NULL,
	start_offset INTEGER NOT NULL,
	end_offset   INTEGER NOT NULL,
	kind         TEXT NOT NULL,
	symbol       TEXT NOT NULL,
	content_hash BLOB NOT NULL,
	token_count  INTEGER NOT NULL
);
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

// symbolKinds are stored as one byte (see chunk.Symbol); otherKind is
// followed by the kind as a string.
var symbolKinds = []string{"function", "method", "class", "type", "interface", "field", "const", "var"}

const otherKind = 0xFF

// packSymbols encodes a file's symbols compactly for the files table.
func packSymbols(syms []trigram.Symbol) []byte {
	var out []byte
	out = binary.AppendUvarint(out, uint64(len(syms)))
	for _, s := range syms {
		out = binary.AppendUvarint(out, uint64(len(s.Name)))
		out = append(out, s.Name...)
		if k := slices.Index(symbolKinds, s.Kind); k >= 0 {
			out = append(out, byte(k))
		} else {
			out = append(out, otherKind)
			out = binary.AppendUvarint(out, uint64(len(s.Kind)))
			out = append(out, s.Kind...)
		}
		out = binary.AppendUvarint(out, uint64(s.StartOffset))
		out = binary.AppendUvarint(out, uint64(s.EndOffset-s.StartOffset))
	}
	return out
}

// unpackSymbols decodes packSymbols' output.
func unpackSymbols(b []byte) ([]trigram.Symbol, error) {
	bad := errors.New("corrupt symbol list")
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, bad
		}
		b = b[n:]
		return v, nil
	}
	str := func() (string, error) {
		n, err := next()
		if err != nil || n > uint64(len(b)) {
			return "", bad
		}
		s := string(b[:n])
		b = b[n:]
		return s, nil
	}
	if len(b) == 0 {
		return nil, nil
	}
	n, err := next()
	if err != nil || n > uint64(len(b)) {
		return nil, bad
	}
	out := make([]trigram.Symbol, 0, n)
	for range n {
		var s trigram.Symbol
		var start, size uint64
		if s.Name, err = str(); err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, bad
		}
		k := b[0]
		b = b[1:]
		switch {
		case int(k) < len(symbolKinds):
			s.Kind = symbolKinds[k]
		case k == otherKind:
			if s.Kind, err = str(); err != nil {
				return nil, err
			}
		default:
			return nil, bad
		}
		if start, err = next(); err != nil {
			return nil, err
		}
		if size, err = next(); err != nil {
			return nil, err
		}
		s.StartOffset, s.EndOffset = int(start), int(start+size)
		out = append(out, s)
	}
	return out, nil
}

func setMeta(ctx context.Context, tx *sql.Tx, key, value string) error {
	_, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	return err
}

func getMeta(ctx context.Context, db *sql.DB, key string) string {
	var v string
	db.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", key).Scan(&v)
	return v
}
