// Package repos manages golden repositories (registered by an admin, cloned
// into the data directory, exposed read-only to everyone as ALIAS-global)
// and the cidx-meta-global catalog that describes them.
//
// On disk, under DATA_DIR/repos/ALIAS/:
//
//	git/                 a bare, single-branch clone of the source
//	snapshots/COMMIT/    the tree of COMMIT, checked out once and never changed
//
// Readers are always given a complete snapshot: a refresh checks out the new
// commit beside the old one and then switches the database row to it, so a
// reader never sees a half-updated tree. The previous snapshot is kept until
// the next refresh so that reads already under way can finish.
package repos

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/store"
)

// GlobalSuffix is appended to a golden repository's alias to name its
// read-only global view.
const GlobalSuffix = "-global"

// MetaAlias is the catalog's base alias; it is read as cidx-meta-global.
const MetaAlias = "cidx-meta"

// Job operation names.
const (
	OpAdd     = "add_golden_repo"
	OpRemove  = "remove_golden_repo"
	OpRefresh = "refresh_golden_repo"
	OpReindex = "reindex"
)

// Indexer builds a repository's search index; the index package provides it.
type Indexer interface {
	IndexCommit(ctx context.Context, alias, commit, snapshot, gitDir string, full bool, progress func(int, string)) error
	// IndexTree indexes a tree that is not a git commit (the catalog).
	IndexTree(ctx context.Context, alias, tree, snapshot string, entries []gitcli.TreeEntry) error
	Forget(ctx context.Context, alias string) error
}

// Repository states.
const (
	StatePending    = "pending"
	StateCloning    = "cloning"
	StateReady      = "ready"
	StateRefreshing = "refreshing"
	StateRemoving   = "removing"
	StateFailed     = "failed"
)

// Golden is a registered golden repository.
type Golden struct {
	Alias       string `json:"alias"`
	Source      string `json:"repo_url"`
	Branch      string `json:"default_branch"`
	State       string `json:"state"`
	Commit      string `json:"commit"`
	CreatedAt   string `json:"created_at"`
	LastRefresh string `json:"last_refresh"`
	Stats       Stats  `json:"stats"`
	Error       string `json:"error,omitempty"`
}

// GlobalAlias is the alias users read this repository by.
func (g Golden) GlobalAlias() string { return g.Alias + GlobalSuffix }

// Stats summarises a snapshot; it is what the catalog and status tools show.
type Stats struct {
	Files     int             `json:"files"`
	Bytes     int64           `json:"bytes"`
	Languages []LanguageShare `json:"languages"`
}

// LanguageShare is one language's part of a repository.
type LanguageShare struct {
	Language string `json:"language"`
	Files    int    `json:"files"`
	Bytes    int64  `json:"bytes"`
}

// Service manages golden repositories.
type Service struct {
	db   *store.DB
	jobs *jobs.Manager
	git  *gitcli.Runner
	dir  string // DATA_DIR/repos
	meta string // DATA_DIR/meta
	// current caches (commit, state) per alias for a second: every read
	// resolves its alias. Changes made in this process forget it at once.
	current *store.Cache[string, [2]string]
	indexer Indexer
	// catalogMu serialises catalog snapshots and their indexing.
	catalogMu sync.Mutex
}

// SetIndexer makes add, refresh and reindex jobs build the search index.
func (s *Service) SetIndexer(ix Indexer) { s.indexer = ix }

// NewService returns a Service storing repositories under dataDir and
// registers its job types with jm.
func NewService(db *store.DB, jm *jobs.Manager, git *gitcli.Runner, dataDir string) (*Service, error) {
	s := &Service{db: db, jobs: jm, git: git, dir: filepath.Join(dataDir, "repos"), meta: filepath.Join(dataDir, "meta"),
		current: store.NewCache[string, [2]string](time.Second, 10000)}
	for _, d := range []string{s.dir, s.meta} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	jm.Register(OpAdd, s.runAdd)
	jm.Register(OpRefresh, s.runRefresh)
	jm.Register(OpRemove, s.runRemove)
	jm.Register(OpReindex, s.runReindex)
	return s, nil
}

// Error is a repository error with a hint and optional details for the
// caller (suggested aliases).
type Error struct {
	Message string
	Hint    string
	Details map[string]any
}

func (e *Error) Error() string { return e.Message }

// UserHint tells the caller how to recover.
func (e *Error) UserHint() string { return e.Hint }

// UserDetails are extra fields for the error payload.
func (e *Error) UserDetails() map[string]any { return e.Details }

var aliasRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ValidateAlias checks a golden repository's base alias.
func ValidateAlias(alias string) error {
	if !aliasRE.MatchString(alias) || strings.Contains(alias, "..") {
		return &Error{Message: fmt.Sprintf("invalid alias %q: use 1-100 letters, digits, '.', '_' or '-', starting with a letter or digit", alias), Hint: `for example "backend" or "payments-api"`}
	}
	if strings.HasSuffix(strings.ToLower(alias), GlobalSuffix) {
		return &Error{Message: fmt.Sprintf("invalid alias %q: do not include %q, it is added automatically", alias, GlobalSuffix), Hint: fmt.Sprintf("use %q", strings.TrimSuffix(alias, alias[len(alias)-len(GlobalSuffix):]))}
	}
	if strings.EqualFold(alias, MetaAlias) {
		return &Error{Message: fmt.Sprintf("alias %q is reserved for the repository catalog", alias)}
	}
	return nil
}

// validateSource refuses sources git could read as an option or that use
// a transport that runs commands.
func validateSource(src string) error {
	switch {
	case src == "":
		return &Error{Message: "repository source is empty", Hint: "give a git URL (https://host/org/repo.git) or a local path to a git repository"}
	case strings.HasPrefix(src, "-"):
		return &Error{Message: fmt.Sprintf("invalid repository source %q: it must not start with '-'", src)}
	case strings.ContainsAny(src, "\x00\n\r"):
		return &Error{Message: "invalid repository source: it contains control characters"}
	case strings.HasPrefix(src, "ext::") || strings.HasPrefix(src, "fd::"):
		return &Error{Message: fmt.Sprintf("repository source %q uses a transport that is not allowed", src), Hint: "use https://, ssh://, git:// or a local path"}
	}
	return nil
}

const goldenColumns = "alias, source, branch, state, commit_id, created_at, coalesce(last_refresh, ''), stats, error"

func scanGolden(row interface{ Scan(...any) error }) (Golden, error) {
	var g Golden
	var stats string
	if err := row.Scan(&g.Alias, &g.Source, &g.Branch, &g.State, &g.Commit, &g.CreatedAt, &g.LastRefresh, &stats, &g.Error); err != nil {
		return g, err
	}
	_ = json.Unmarshal([]byte(stats), &g.Stats)
	if g.Stats.Languages == nil {
		g.Stats.Languages = []LanguageShare{}
	}
	return g, nil
}

// Get returns the golden repository with base alias.
func (s *Service) Get(ctx context.Context, alias string) (Golden, error) {
	g, err := scanGolden(s.db.QueryRowContext(ctx, "SELECT "+goldenColumns+" FROM repos WHERE alias = ?", alias))
	if errors.Is(err, sql.ErrNoRows) {
		return Golden{}, s.notFound(ctx, alias, false)
	}
	if err != nil {
		return Golden{}, fmt.Errorf("read repository %s: %w", alias, err)
	}
	return g, nil
}

// List returns every golden repository sorted by alias.
func (s *Service) List(ctx context.Context) ([]Golden, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+goldenColumns+" FROM repos ORDER BY alias")
	if err != nil {
		return nil, fmt.Errorf("list repositories: %w", err)
	}
	defer rows.Close()
	out := []Golden{}
	for rows.Next() {
		g, err := scanGolden(rows)
		if err != nil {
			return nil, fmt.Errorf("list repositories: %w", err)
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// notFound builds the "no such repository" error with close matches.
func (s *Service) notFound(ctx context.Context, alias string, global bool) error {
	all, _ := s.List(ctx)
	var names []string
	for _, g := range all {
		if global {
			names = append(names, g.GlobalAlias())
		} else {
			names = append(names, g.Alias)
		}
	}
	if global {
		names = append(names, MetaAlias+GlobalSuffix)
		slices.Sort(names)
	}
	sugg := suggest(alias, names, 3)
	available := names
	if len(available) > 10 {
		available = available[:10]
	}
	kind := "Golden repository"
	hint := "use list_global_repos to see the repositories you can read"
	if global {
		kind = "Global repository"
	} else {
		hint = "golden repository commands take the base alias (without -global); use list_global_repos to see them"
	}
	if len(sugg) > 0 {
		hint = fmt.Sprintf("did you mean %s? %s", quoteList(sugg), hint)
	}
	return &Error{
		Message: fmt.Sprintf("%s '%s' not found", kind, alias),
		Hint:    hint,
		Details: map[string]any{"suggestions": nonNil(sugg), "available_values": nonNil(available)},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, " or ")
}

// Snapshot is a readable tree: a global repository at one commit, or the catalog.
type Snapshot struct {
	Alias  string // as the user named it, e.g. backend-global
	Golden string // base alias; MetaAlias for the catalog
	Dir    string // absolute directory to open with os.Root
	Commit string // "" for the catalog
}

// Resolve turns a user-supplied alias into a readable snapshot.
func (s *Service) Resolve(ctx context.Context, alias string) (Snapshot, error) {
	if alias == MetaAlias+GlobalSuffix {
		return Snapshot{Alias: MetaAlias + GlobalSuffix, Golden: MetaAlias, Dir: s.meta}, nil
	}
	base, ok := strings.CutSuffix(alias, GlobalSuffix)
	if !ok || ValidateAlias(base) != nil {
		err := s.notFound(ctx, alias, true).(*Error)
		if !ok {
			err.Hint = fmt.Sprintf("global repositories are named ALIAS-global (e.g. %q); %s", alias+GlobalSuffix, err.Hint)
		}
		return Snapshot{}, err
	}
	cur, err := s.current.Get(base, func() ([2]string, error) {
		var cur [2]string
		err := s.db.QueryRowFast(ctx, "SELECT commit_id, state FROM repos WHERE alias = ?", base).Scan(&cur[0], &cur[1])
		return cur, err
	})
	commit, state := cur[0], cur[1]
	if errors.Is(err, sql.ErrNoRows) {
		return Snapshot{}, s.notFound(ctx, alias, true)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("resolve %s: %w", alias, err)
	}
	if commit == "" || state == StateRemoving {
		msg := fmt.Sprintf("repository '%s' is not readable yet (state: %s)", alias, state)
		if state == StateRemoving {
			msg = fmt.Sprintf("repository '%s' is being removed", alias)
		}
		return Snapshot{}, &Error{Message: msg, Hint: "check global_repo_status or get_job_details; try again when the job has completed"}
	}
	return Snapshot{Alias: base + GlobalSuffix, Golden: base, Dir: s.snapshotDir(base, commit), Commit: commit}, nil
}

func (s *Service) repoDir(alias string) string { return filepath.Join(s.dir, alias) }
func (s *Service) gitDir(alias string) string  { return filepath.Join(s.dir, alias, "git") }
func (s *Service) snapshotDir(alias, commit string) string {
	return filepath.Join(s.dir, alias, "snapshots", commit)
}

// Expand turns a list of aliases, some with wildcards (*, ?, [..]), into
// concrete global aliases: literals are kept as given (so that a wrong one
// is reported), wildcards are matched against the readable global aliases,
// and duplicates are dropped, keeping the first occurrence.
func (s *Service) Expand(ctx context.Context, patterns []string) ([]string, error) {
	var globals []string
	loaded := false
	seen := map[string]bool{}
	var out []string
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, p := range patterns {
		if !strings.ContainsAny(p, "*?[") {
			add(p)
			continue
		}
		if !loaded {
			all, err := s.List(ctx)
			if err != nil {
				return nil, err
			}
			globals = []string{MetaAlias + GlobalSuffix}
			for _, g := range all {
				if g.Commit != "" {
					globals = append(globals, g.GlobalAlias())
				}
			}
			slices.Sort(globals)
			loaded = true
		}
		for _, g := range globals {
			if ok, err := path.Match(p, g); err != nil {
				return nil, &Error{Message: fmt.Sprintf("invalid alias pattern %q: %v", p, err)}
			} else if ok {
				add(g)
			}
		}
	}
	return out, nil
}

// ResolveDir implements the files package's resolver: the directory and
// commit a user-supplied alias reads from.
func (s *Service) ResolveDir(ctx context.Context, alias string) (dir, commit, canonical string, err error) {
	snap, err := s.Resolve(ctx, alias)
	if err != nil {
		return "", "", "", err
	}
	return snap.Dir, snap.Commit, snap.Alias, nil
}

// exec changes the repos table and forgets the cached aliases, so this
// process's next read sees the change.
func (s *Service) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := s.db.ExecContext(ctx, q, args...)
	s.current.Forget()
	return res, err
}

// SnapshotDir is where the tree of commit of golden repository alias is
// checked out (it exists while the commit is served or was just replaced).
func (s *Service) SnapshotDir(alias, commit string) string { return s.snapshotDir(alias, commit) }

// GitDir is the bare clone of golden repository alias.
func (s *Service) GitDir(alias string) string { return s.gitDir(alias) }

// DisplayURL is the source with any embedded credentials hidden, safe to
// show to users and to write in logs.
func (g Golden) DisplayURL() string { return gitcli.Redact(g.Source) }
