// Package config holds cidx's configuration: where the data lives, what the
// server listens on, and the settings an admin may change at run time.
//
// Values come from, in increasing precedence: built-in defaults, the YAML
// file DATA_DIR/config.yaml, and (for run-time settings) the values an admin
// stored with set_global_config, kept in the metadata database so that every
// process sharing the data directory sees the same values.
package config

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cidx/cidx/internal/store"
)

// DefaultHTTPAddr is where `cidx serve` listens unless told otherwise.
const DefaultHTTPAddr = "127.0.0.1:8383"

// DataDir picks the data directory: the flag, else $CIDX_DATA_DIR, else ~/.cidx.
func DataDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv("CIDX_DATA_DIR")
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no --data-dir, no $CIDX_DATA_DIR and no home directory: %w", err)
		}
		dir = filepath.Join(home, ".cidx")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data directory %q: %w", dir, err)
	}
	return abs, nil
}

// File is the shape of DATA_DIR/config.yaml.
type File struct {
	HTTP      string    `yaml:"http"`
	BaseURL   string    `yaml:"base_url"`
	Settings  Settings  `yaml:",inline"`
	Embedding Embedding `yaml:"embedding"`
	Index     Index     `yaml:"index"`
}

// Embedding selects the embedder. The key is best given through the
// environment variable named by api_key_env, so the file holds no secret.
type Embedding struct {
	Provider    string `yaml:"provider"` // builtin (default), openai, voyage
	URL         string `yaml:"url"`
	Model       string `yaml:"model"`
	APIKey      string `yaml:"api_key"`
	APIKeyEnv   string `yaml:"api_key_env"`
	Dimensions  int    `yaml:"dimensions"`
	BatchSize   int    `yaml:"batch_size"`
	Concurrency int    `yaml:"concurrency"`
}

// Key returns the API key: from the environment variable if one is named.
func (e Embedding) Key() string {
	if e.APIKeyEnv != "" {
		return os.Getenv(e.APIKeyEnv)
	}
	return e.APIKey
}

// Index says what gets indexed (see the index package).
type Index struct {
	MaxFileBytes   int64    `yaml:"max_file_bytes"`
	Exclude        []string `yaml:"exclude"`
	IndexGenerated bool     `yaml:"index_generated"`
	// Int8Vectors stores vectors as int8 on disk (the default; false keeps
	// float32, 4x larger, for the last bit of ranking precision).
	Int8Vectors *bool `yaml:"int8_vectors"`
	// ReaderMemoryMB bounds the memory of open indexes (decoded vectors
	// and chunk tables); the least recently searched ones are closed
	// first. Default 2048.
	ReaderMemoryMB int `yaml:"reader_memory_mb"`
}

// Int8 is Int8Vectors with its default (true).
func (i Index) Int8() bool { return i.Int8Vectors == nil || *i.Int8Vectors }

// Settings are the values an admin can change while the server runs.
type Settings struct {
	MaxTokensPerRequest int `yaml:"max_tokens_per_request" json:"max_tokens_per_request"`
	CharsPerToken       int `yaml:"chars_per_token" json:"chars_per_token"`
	RefreshInterval     int `yaml:"refresh_interval" json:"refresh_interval"`
}

// Defaults are the built-in settings.
var Defaults = Settings{MaxTokensPerRequest: 5000, CharsPerToken: 4, RefreshInterval: 3600}

// Validate checks every field's range.
func (s Settings) Validate() error {
	var errs []error
	if s.MaxTokensPerRequest < 1000 || s.MaxTokensPerRequest > 20000 {
		errs = append(errs, fmt.Errorf("max_tokens_per_request must be between 1000 and 20000 (got %d)", s.MaxTokensPerRequest))
	}
	if s.CharsPerToken < 3 || s.CharsPerToken > 5 {
		errs = append(errs, fmt.Errorf("chars_per_token must be between 3 and 5 (got %d)", s.CharsPerToken))
	}
	if s.RefreshInterval < 60 {
		errs = append(errs, fmt.Errorf("refresh_interval must be at least 60 seconds (got %d)", s.RefreshInterval))
	}
	return errors.Join(errs...)
}

// LoadFile reads DATA_DIR/config.yaml; a missing file gives the defaults.
func LoadFile(dataDir string) (File, error) {
	f := File{HTTP: DefaultHTTPAddr, Settings: Defaults}
	path := filepath.Join(dataDir, "config.yaml")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("parse %s: %w", path, err)
	}
	if err := f.Settings.Validate(); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Service answers the current settings: the file's values overlaid with
// the ones stored by an admin.
type Service struct {
	db    *store.DB
	file  Settings
	cache *store.Cache[struct{}, Settings]
}

// NewService returns a Service with file as the base values.
func NewService(db *store.DB, file Settings) *Service {
	return &Service{db: db, file: file, cache: store.NewCache[struct{}, Settings](time.Second, 1)}
}

var keys = []string{"max_tokens_per_request", "chars_per_token", "refresh_interval"}

func (s *Settings) ptr(key string) *int {
	switch key {
	case "max_tokens_per_request":
		return &s.MaxTokensPerRequest
	case "chars_per_token":
		return &s.CharsPerToken
	}
	return &s.RefreshInterval
}

// Get returns the settings in force now. An update made through this
// Service applies to the very next call; one made by another process on the
// same data directory within a second.
func (s *Service) Get(ctx context.Context) (Settings, error) {
	return s.cache.Get(struct{}{}, func() (Settings, error) { return s.load(ctx) })
}

func (s *Service) load(ctx context.Context) (Settings, error) {
	out := s.file
	// One prepared single-row query: this runs on every file read.
	var m, c, r sql.NullString
	err := s.db.QueryRowFast(ctx, `SELECT
		(SELECT value FROM settings WHERE key = 'max_tokens_per_request'),
		(SELECT value FROM settings WHERE key = 'chars_per_token'),
		(SELECT value FROM settings WHERE key = 'refresh_interval')`).Scan(&m, &c, &r)
	if err != nil {
		return out, fmt.Errorf("read settings: %w", err)
	}
	for _, kv := range []struct {
		key string
		v   sql.NullString
	}{{"max_tokens_per_request", m}, {"chars_per_token", c}, {"refresh_interval", r}} {
		if n, err := strconv.Atoi(kv.v.String); kv.v.Valid && err == nil {
			*out.ptr(kv.key) = n
		}
	}
	return out, nil
}

// Update applies the non-nil values of patch after validating the result as
// a whole, so a bad value changes nothing.
func (s *Service) Update(ctx context.Context, patch map[string]int) (Settings, error) {
	cur, err := s.Get(ctx)
	if err != nil {
		return cur, err
	}
	next := cur
	for k, v := range patch {
		if !isKey(k) {
			return cur, fmt.Errorf("unknown setting %q", k)
		}
		*next.ptr(k) = v
	}
	if err := next.Validate(); err != nil {
		return cur, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return cur, fmt.Errorf("save settings: %w", err)
	}
	defer tx.Rollback()
	for k := range patch {
		if _, err := tx.ExecContext(ctx, "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", k, strconv.Itoa(*next.ptr(k))); err != nil {
			return cur, fmt.Errorf("save settings: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return cur, fmt.Errorf("save settings: %w", err)
	}
	s.cache.Forget()
	return next, nil
}

func isKey(k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}
