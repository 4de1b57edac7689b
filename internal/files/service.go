package files

import (
	"context"
	"fmt"
	"sync"
)

// Resolver turns a user-supplied repository alias into the directory to
// read and the commit it holds. The repos package implements it.
type Resolver interface {
	ResolveDir(ctx context.Context, alias string) (dir, commit, canonical string, err error)
	Expand(ctx context.Context, patterns []string) ([]string, error)
}

// Source names what a result was read from.
type Source struct {
	Alias  string // canonical alias, e.g. backend-global
	Commit string // commit of the snapshot; "" for the catalog
}

// Service reads repositories by alias: it is the one way from
// (alias, relative path) to file contents.
type Service struct {
	resolver Resolver
	budget   func(ctx context.Context) (Budget, error)
}

// NewService returns a Service. budget is consulted on every read so that
// a changed setting applies to the next call.
func NewService(r Resolver, budget func(ctx context.Context) (Budget, error)) *Service {
	return &Service{resolver: r, budget: budget}
}

func (s *Service) open(ctx context.Context, alias string) (*Tree, Source, error) {
	dir, commit, canonical, err := s.resolver.ResolveDir(ctx, alias)
	if err != nil {
		return nil, Source{}, err
	}
	t, err := Open(dir)
	if err != nil {
		return nil, Source{}, fmt.Errorf("open repository %s: %w", canonical, err)
	}
	return t, Source{Alias: canonical, Commit: commit}, nil
}

// Read returns one token-bounded page of a file (see Tree.Read).
func (s *Service) Read(ctx context.Context, alias, path string, offset, limit int) (*Page, Source, error) {
	b, err := s.budget(ctx)
	if err != nil {
		return nil, Source{}, err
	}
	t, src, err := s.open(ctx, alias)
	if err != nil {
		return nil, Source{}, err
	}
	defer t.Close()
	pg, err := t.Read(path, ReadOptions{Offset: offset, Limit: limit, Budget: b})
	return pg, src, err
}

// Listing is the result of List for one repository.
type Listing struct {
	Source    Source
	Dir       string // the clean directory listed ("" = root)
	Files     []FileInfo
	Total     int
	Truncated bool
}

// List lists files of one repository (see Tree.List).
func (s *Service) List(ctx context.Context, alias string, o ListOptions) (*Listing, error) {
	t, src, err := s.open(ctx, alias)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	dir, err := CleanPath(o.Dir, true)
	if err != nil {
		return nil, err
	}
	o.Dir = dir
	fl, total, trunc, err := t.List(o)
	if err != nil {
		return nil, err
	}
	if fl == nil {
		fl = []FileInfo{}
	}
	return &Listing{Source: src, Dir: dir, Files: fl, Total: total, Truncated: trunc}, nil
}

// ManyListings is the result of ListMany: one listing per repository that
// could be read, and an error message per repository that could not.
type ManyListings struct {
	Listings []*Listing
	Errors   map[string]string
}

// ListMany lists several repositories (aliases may hold wildcards) in
// parallel. A repository that fails is reported in Errors, never dropped
// silently.
func (s *Service) ListMany(ctx context.Context, aliases []string, o ListOptions) (*ManyListings, error) {
	expanded, err := s.resolver.Expand(ctx, aliases)
	if err != nil {
		return nil, err
	}
	res := &ManyListings{Listings: []*Listing{}, Errors: map[string]string{}}
	out := make([]*Listing, len(expanded))
	errs := make([]error, len(expanded))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, a := range expanded {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = s.List(ctx, a, o)
		}()
	}
	wg.Wait()
	for i, a := range expanded {
		if errs[i] != nil {
			res.Errors[a] = errs[i].Error()
			continue
		}
		res.Listings = append(res.Listings, out[i])
	}
	return res, nil
}

// Tree renders a directory tree of one repository (see Tree.DirTree).
func (s *Service) Tree(ctx context.Context, alias string, o TreeOptions) (*TreeResult, Source, error) {
	t, src, err := s.open(ctx, alias)
	if err != nil {
		return nil, Source{}, err
	}
	defer t.Close()
	if o.Path == "" && o.RootName == "" {
		o.RootName = src.Alias // a snapshot directory's name means nothing to a user
	}
	r, err := t.DirTree(o)
	return r, src, err
}

// UserMessage is the error text without the hint, for payloads that carry
// the hint in a field of its own.
func (e *Error) UserMessage() string { return e.Message }

// UserHint says what to do instead.
func (e *Error) UserHint() string { return e.Hint }

// Matcher is a compiled path glob with the semantics of List's Pattern (a
// glob without "/" matches the file name at any depth, "**" spans
// directories), for callers that filter paths themselves.
type Matcher struct{ g glob }

// CompileGlob compiles pattern.
func CompileGlob(pattern string) Matcher { return Matcher{compileGlob(pattern)} }

// Match reports whether the clean relative path p matches.
func (m Matcher) Match(p string) bool { return m.g.match(p) }

// LanguageMatches reports whether the file p is in language want, given as
// a language name ("python") or an extension ("py", ".py").
func LanguageMatches(p, want string) bool { return languageMatches(p, want) }
