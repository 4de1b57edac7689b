// Package search answers code searches over one or many repositories:
// search_code (BM25, semantic, hybrid by reciprocal rank fusion, with
// every filter in every mode), regex_search (exact, from the trigram
// index) and chunk look-ups. It plans the query, fans out over the
// repositories, reports per-repository errors and staleness, and merges.
package search

import (
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/repos"
)

// Service runs searches.
type Service struct {
	repos *repos.Service
	idx   *index.Manager
}

// NewService returns a Service.
func NewService(r *repos.Service, idx *index.Manager) *Service { return &Service{repos: r, idx: idx} }

// Error is a search error with a hint.
type Error struct{ Message, Hint string }

func (e *Error) Error() string    { return e.Message }
func (e *Error) UserHint() string { return e.Hint }

// target is one repository to search.
type target struct {
	alias  string // canonical global alias
	base   string // golden alias
	head   string // commit the repository serves
	reader *index.Reader
}

// RepoInfo is what a search reports about each repository it searched.
type RepoInfo struct {
	Alias         string `json:"repository_alias"`
	Commit        string `json:"commit" jsonschema:"commit whose index was searched"`
	Head          string `json:"head_commit" jsonschema:"commit the repository serves now"`
	Stale         bool   `json:"stale" jsonschema:"the index lags the repository (a refresh is being indexed)"`
	VectorsReady  bool   `json:"vectors_ready"`
	EffectiveMode string `json:"effective_mode" jsonschema:"mode actually used; fts when vectors were not ready"`
	Note          string `json:"note,omitempty"`
}

// open resolves aliases (with wildcards when multi) and opens each
// repository's index. Failures go to errs by alias, never silently. In a
// multi-repository search, aliases matching one of exclude are skipped.
func (s *Service) open(ctx context.Context, aliases []string, multi bool, exclude ...*regexp.Regexp) ([]*target, map[string]string, error) {
	list := aliases
	if multi {
		var err error
		if list, err = s.repos.Expand(ctx, aliases); err != nil {
			return nil, nil, err
		}
		list = slices.DeleteFunc(list, func(a string) bool {
			return slices.ContainsFunc(exclude, func(re *regexp.Regexp) bool { return re.MatchString(a) })
		})
	}
	errs := map[string]string{}
	var out []*target
	for _, a := range list {
		snap, err := s.repos.Resolve(ctx, a)
		if err != nil {
			if !multi {
				return nil, nil, err
			}
			errs[a] = err.Error()
			continue
		}
		rd, err := s.idx.Open(ctx, snap.Golden)
		if err != nil {
			err = &Error{Message: fmt.Sprintf("repository '%s' cannot be searched: %v", snap.Alias, err), Hint: "get_index_status shows its index; an admin can rebuild it with trigger_reindex"}
			if !multi {
				return nil, nil, err
			}
			errs[snap.Alias] = err.Error()
			continue
		}
		head := snap.Commit
		if snap.Golden == repos.MetaAlias {
			head = rd.Commit // the catalog has no commit: its index names its tree
		}
		out = append(out, &target{alias: snap.Alias, base: snap.Golden, head: head, reader: rd})
	}
	return out, errs, nil
}

func release(ts []*target) {
	for _, t := range ts {
		t.reader.Release()
	}
}

// readSnapshot reads path in the snapshot of the commit the index was
// built from.
func (s *Service) readSnapshot(alias, commit, p string) ([]byte, error) {
	root, err := os.OpenRoot(s.repos.SnapshotDir(alias, commit))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(p)
}

// lines returns lines [from, to] (1-based, inclusive) of path in the
// snapshot of commit.
func (s *Service) lines(alias, commit, p string, from, to int) ([]string, error) {
	data, err := s.readSnapshot(alias, commit, p)
	if err != nil {
		return nil, err
	}
	all := strings.SplitAfter(string(data), "\n")
	from = max(from, 1)
	to = min(to, len(all))
	if from > to {
		return nil, nil
	}
	return all[from-1 : to], nil
}

// bytesOf reads [start, end) of path in the snapshot of commit.
func (s *Service) bytesOf(alias, commit, p string, start, end int) ([]byte, error) {
	data, err := s.readSnapshot(alias, commit, p)
	if err != nil {
		return nil, err
	}
	start, end = min(max(start, 0), len(data)), min(max(end, 0), len(data))
	return data[start:max(start, end)], nil
}

// filter compiles the path and language filters shared by every mode.
type filter struct {
	language, excludeLanguage []string
	include, exclude          []files.Matcher
	extensions                []string
}

// FilterSpec is the user's filters.
type FilterSpec struct {
	Language        string
	ExcludeLanguage string
	PathFilter      string
	ExcludePath     string
	FileExtensions  []string
}

func newFilter(f FilterSpec) *filter {
	out := &filter{}
	split := func(s string) []string {
		var r []string
		for _, x := range strings.Split(s, ",") {
			if x = strings.TrimSpace(x); x != "" {
				r = append(r, x)
			}
		}
		return r
	}
	out.language = split(f.Language)
	out.excludeLanguage = split(f.ExcludeLanguage)
	for _, p := range split(f.PathFilter) {
		out.include = append(out.include, files.CompileGlob(p))
	}
	for _, p := range split(f.ExcludePath) {
		out.exclude = append(out.exclude, files.CompileGlob(p))
	}
	for _, e := range f.FileExtensions {
		e = strings.ToLower(strings.TrimSpace(e))
		if e != "" && !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		if e != "" {
			out.extensions = append(out.extensions, e)
		}
	}
	return out
}

func (f *filter) empty() bool {
	return len(f.language)+len(f.excludeLanguage)+len(f.include)+len(f.exclude)+len(f.extensions) == 0
}

func (f *filter) keep(p, lang string) bool {
	if len(f.language) > 0 && !anyLang(p, f.language) {
		return false
	}
	if len(f.excludeLanguage) > 0 && anyLang(p, f.excludeLanguage) {
		return false
	}
	if len(f.include) > 0 {
		ok := false
		for _, m := range f.include {
			ok = ok || m.Match(p)
		}
		if !ok {
			return false
		}
	}
	for _, m := range f.exclude {
		if m.Match(p) {
			return false
		}
	}
	if len(f.extensions) > 0 {
		ext := strings.ToLower(path.Ext(p))
		ok := false
		for _, e := range f.extensions {
			ok = ok || ext == e
		}
		if !ok {
			return false
		}
	}
	return true
}

func anyLang(p string, langs []string) bool {
	for _, l := range langs {
		if files.LanguageMatches(p, l) {
			return true
		}
	}
	return false
}

func (f *filter) keepFunc() index.Keep {
	if f.empty() {
		return nil
	}
	return f.keep
}

// fanOut runs f for every target in parallel (at most 4 at once) and
// collects per-repository errors.
func fanOut[T any](ts []*target, errs map[string]string, f func(t *target) (T, error)) []T {
	res := make([]T, len(ts))
	fail := make([]error, len(ts))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res[i], fail[i] = f(t)
		}()
	}
	wg.Wait()
	var out []T
	for i, t := range ts {
		if fail[i] != nil {
			errs[t.alias] = fail[i].Error()
			continue
		}
		out = append(out, res[i])
	}
	return out
}

func since(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
