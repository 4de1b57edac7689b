// Package store opens the SQLite database that holds cidx's metadata (users,
// tokens, repositories, jobs, settings) and keeps its schema current.
//
// Several processes may open the same database at once (a running server and
// the cidx CLI), so the database runs in WAL mode with a busy timeout and
// every schema change is applied inside a transaction guarded by
// user_version.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is the metadata database.
type DB struct {
	*sql.DB
	path  string
	stmts sync.Map // query text -> *sql.Stmt
}

// QueryRowFast runs a query that is on a hot path (every MCP call) through
// a statement prepared once: preparing is most of the cost of a point
// query in SQLite.
func (s *DB) QueryRowFast(ctx context.Context, query string, args ...any) *sql.Row {
	if st, ok := s.stmts.Load(query); ok {
		return st.(*sql.Stmt).QueryRowContext(ctx, args...)
	}
	st, err := s.PrepareContext(ctx, query)
	if err != nil {
		return s.QueryRowContext(ctx, query, args...) // reports the error through Scan
	}
	if prev, loaded := s.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		st = prev.(*sql.Stmt)
	}
	return st.QueryRowContext(ctx, args...)
}

// migrations are applied in order; index i brings the schema to version i+1.
// Never edit an entry once it has shipped: append a new one.
var migrations = []string{
	`CREATE TABLE users (
		name          TEXT PRIMARY KEY,
		role          TEXT NOT NULL,
		password_hash TEXT NOT NULL,
		created_at    TEXT NOT NULL
	);
	CREATE TABLE tokens (
		id           TEXT PRIMARY KEY,
		user_name    TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
		label        TEXT NOT NULL DEFAULT '',
		hash         TEXT NOT NULL UNIQUE,
		created_at   TEXT NOT NULL,
		last_used_at TEXT
	);
	CREATE INDEX tokens_user ON tokens(user_name);
	CREATE TABLE repos (
		alias        TEXT PRIMARY KEY,
		source       TEXT NOT NULL,
		branch       TEXT NOT NULL,
		state        TEXT NOT NULL,
		commit_id    TEXT NOT NULL DEFAULT '',
		created_at   TEXT NOT NULL,
		last_refresh TEXT,
		stats        TEXT NOT NULL DEFAULT '{}',
		error        TEXT NOT NULL DEFAULT ''
	);
	CREATE TABLE jobs (
		id           TEXT PRIMARY KEY,
		op           TEXT NOT NULL,
		params       TEXT NOT NULL DEFAULT '{}',
		username     TEXT NOT NULL,
		status       TEXT NOT NULL,
		progress     INTEGER NOT NULL DEFAULT 0,
		message      TEXT NOT NULL DEFAULT '',
		result       TEXT,
		error        TEXT,
		created_at   TEXT NOT NULL,
		started_at   TEXT,
		completed_at TEXT,
		worker       TEXT NOT NULL DEFAULT '',
		heartbeat_at TEXT
	);
	CREATE INDEX jobs_status ON jobs(status);
	CREATE TABLE settings (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);`,
	// The search index of each golden repository: the build directory
	// readers use (swapped atomically), and whether its vectors are ready.
	`CREATE TABLE indexes (
		alias         TEXT PRIMARY KEY,
		dir           TEXT NOT NULL DEFAULT '',
		commit_id     TEXT NOT NULL DEFAULT '',
		embedder      TEXT NOT NULL DEFAULT '',
		vectors_ready INTEGER NOT NULL DEFAULT 0,
		state         TEXT NOT NULL DEFAULT 'none',
		error         TEXT NOT NULL DEFAULT '',
		built_at      TEXT,
		manifest      TEXT NOT NULL DEFAULT '{}'
	);`,
}

// Open opens (creating if needed) the database at path and migrates it.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create database directory: %w", err)
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	s := &DB{DB: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path is the database file's location.
func (s *DB) Path() string { return s.path }

func (s *DB) migrate(ctx context.Context) error {
	tx, err := s.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("migrate: read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this cidx (knows %d): upgrade cidx", version, len(migrations))
	}
	for i := version; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migrate to version %d: %w", i+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return tx.Commit()
}

// Now is the timestamp format used in every table: RFC 3339 in UTC with
// nanoseconds, which sorts as text.
func Now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// GetSetting returns the stored value for key, or ok=false when unset.
func (s *DB) GetSetting(ctx context.Context, key string) (value string, ok bool, err error) {
	err = s.QueryRowContext(ctx, "SELECT value FROM settings WHERE key = ?", key).Scan(&value)
	if err == sql.ErrNoRows {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return value, true, nil
}

// SetSetting stores value under key.
func (s *DB) SetSetting(ctx context.Context, key, value string) error {
	_, err := s.ExecContext(ctx, "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", key, value)
	if err != nil {
		return fmt.Errorf("write setting %s: %w", key, err)
	}
	return nil
}
