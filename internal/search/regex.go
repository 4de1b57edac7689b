package search

import (
	"context"
	"regexp"
	"time"

	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/trigram"
)

// RegexQuery is a regex_search request.
type RegexQuery struct {
	Aliases       []string
	Multi         bool
	Pattern       string
	Path          string
	Include       []string
	Exclude       []string
	CaseSensitive bool
	ContextLines  int
	MaxResults    int
}

// RegexMatch is one matching line.
type RegexMatch struct {
	FilePath        string   `json:"file_path"`
	LineNumber      int      `json:"line_number"`
	Column          int      `json:"column"`
	LineContent     string   `json:"line_content"`
	ContextBefore   []string `json:"context_before"`
	ContextAfter    []string `json:"context_after"`
	RepositoryAlias string   `json:"repository_alias"`
}

// RegexRepo is one repository's regex result.
type RegexRepo struct {
	Info         RepoInfo
	Matches      []RegexMatch
	TotalMatches int
	Truncated    bool
}

// RegexResult is a regex_search answer.
type RegexResult struct {
	Repos     []RegexRepo
	Errors    map[string]string
	ElapsedMS float64
}

// Regex runs regex_search: exact matches, as ripgrep would report them on
// the indexed files, answered from the trigram index.
func (s *Service) Regex(ctx context.Context, q RegexQuery) (*RegexResult, error) {
	start := time.Now()
	if q.Pattern == "" {
		return nil, &Error{Message: "pattern is empty", Hint: `give an RE2 regular expression, e.g. "func \\w+Handler"`}
	}
	if _, err := regexp.Compile(q.Pattern); err != nil {
		return nil, &Error{Message: "invalid pattern: " + err.Error(), Hint: "patterns use RE2 syntax (no look-around or back-references); matching is per line"}
	}
	if q.MaxResults <= 0 {
		q.MaxResults = 100
	}
	prefix, err := files.CleanPath(q.Path, true)
	if err != nil {
		return nil, err
	}
	ts, errs, err := s.open(ctx, q.Aliases, q.Multi)
	if err != nil {
		return nil, err
	}
	defer release(ts)
	per := fanOut(ts, errs, func(t *target) (RegexRepo, error) {
		res, err := t.reader.Regex(ctx, trigram.Query{Pattern: q.Pattern, CaseSensitive: q.CaseSensitive, PathPrefix: prefix,
			Include: q.Include, Exclude: q.Exclude, ContextLines: q.ContextLines, MaxResults: q.MaxResults})
		if err != nil {
			return RegexRepo{}, &Error{Message: err.Error(), Hint: "patterns use RE2 syntax (no look-around or back-references); matching is per line"}
		}
		out := RegexRepo{Info: RepoInfo{Alias: t.alias, Commit: t.reader.Commit, Head: t.head, Stale: t.reader.Commit != t.head, VectorsReady: t.reader.VectorsReady, EffectiveMode: "regex"},
			TotalMatches: res.TotalMatches, Truncated: res.Truncated, Matches: make([]RegexMatch, len(res.Matches))}
		for i, m := range res.Matches {
			out.Matches[i] = RegexMatch{FilePath: m.Path, LineNumber: m.Line, Column: m.Column, LineContent: m.LineContent,
				ContextBefore: nonNil(m.Before), ContextAfter: nonNil(m.After), RepositoryAlias: t.alias}
		}
		return out, nil
	})
	if !q.Multi && len(errs) > 0 {
		for _, e := range errs {
			return nil, &Error{Message: e}
		}
	}
	return &RegexResult{Repos: per, Errors: errs, ElapsedMS: since(start)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
