package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/mcp"
	"github.com/cidx/cidx/internal/repos"
	"github.com/cidx/cidx/internal/search"
)

type searchCodeIn struct {
	QueryText       string   `json:"query_text" jsonschema:"what to find, in words or code"`
	RepositoryAlias any      `json:"repository_alias,omitempty" jsonschema:"alias, list of aliases, or wildcard (*-global); default: every repository"`
	SearchMode      string   `json:"search_mode,omitempty" jsonschema:"semantic (meaning), fts (BM25 words; regex with regex=true), hybrid (both fused)"`
	Limit           int      `json:"limit,omitempty"`
	MinScore        float64  `json:"min_score,omitempty" jsonschema:"drop results scoring below (0-1)"`
	Language        string   `json:"language,omitempty" jsonschema:"language name or extension; comma list"`
	ExcludeLanguage string   `json:"exclude_language,omitempty"`
	PathFilter      string   `json:"path_filter,omitempty" jsonschema:"glob, e.g. src/**/*.go or *_test.go"`
	ExcludePath     string   `json:"exclude_path,omitempty"`
	FileExtensions  []string `json:"file_extensions,omitempty"`
	CaseSensitive   bool     `json:"case_sensitive,omitempty"`
	Fuzzy           bool     `json:"fuzzy,omitempty" jsonschema:"fts: also match terms one edit away"`
	EditDistance    int      `json:"edit_distance,omitempty"`
	SnippetLines    int      `json:"snippet_lines,omitempty" jsonschema:"fts: context lines around the match"`
	Regex           bool     `json:"regex,omitempty" jsonschema:"fts: query_text is an RE2 regex"`
	Accuracy        string   `json:"accuracy,omitempty" jsonschema:"accepted for compatibility; search is always exact"`
	ExcludePatterns []string `json:"exclude_patterns,omitempty" jsonschema:"several repositories: regexes; repositories whose alias matches one are skipped"`
	AggregationMode string   `json:"aggregation_mode,omitempty" jsonschema:"several repositories: global ranking or an equal share per repository"`
	ResponseFormat  string   `json:"response_format,omitempty" jsonschema:"several repositories: flat list or grouped by repository"`
	// Temporal parameters of the contract: refused until a history index exists.
	TimeRange      string `json:"time_range,omitempty"`
	TimeRangeAll   bool   `json:"time_range_all,omitempty"`
	AtCommit       string `json:"at_commit,omitempty"`
	IncludeRemoved bool   `json:"include_removed,omitempty"`
	ShowEvolution  bool   `json:"show_evolution,omitempty"`
	EvolutionLimit int    `json:"evolution_limit,omitempty"`
	DiffType       string `json:"diff_type,omitempty"`
	Author         string `json:"author,omitempty"`
	ChunkType      string `json:"chunk_type,omitempty"`
}

type queryMeta struct {
	QueryText            string            `json:"query_text"`
	SearchMode           string            `json:"search_mode"`
	ExecutionTimeMS      float64           `json:"execution_time_ms"`
	RepositoriesSearched int               `json:"repositories_searched"`
	TimeoutOccurred      bool              `json:"timeout_occurred"`
	Repositories         []search.RepoInfo `json:"repositories" jsonschema:"per repository: commit searched, staleness, vectors readiness"`
}

type repoGroup struct {
	Count   int              `json:"count"`
	Results []search.CodeHit `json:"results"`
}

type codeResults struct {
	Results            []search.CodeHit     `json:"results,omitempty"`
	ResultsByRepo      map[string]repoGroup `json:"results_by_repo,omitempty"`
	TotalResults       int                  `json:"total_results"`
	TotalReposSearched int                  `json:"total_repos_searched"`
	Errors             map[string]string    `json:"errors"`
	QueryMetadata      queryMeta            `json:"query_metadata"`
	Warning            string               `json:"warning,omitempty"`
}

type searchCodeOut struct {
	Success bool        `json:"success"`
	Results codeResults `json:"results"`
}

type regexIn struct {
	RepositoryAlias any      `json:"repository_alias" jsonschema:"alias, list of aliases, or wildcard (*-global)"`
	Pattern         string   `json:"pattern" jsonschema:"RE2 regular expression, matched per line"`
	Path            string   `json:"path,omitempty" jsonschema:"only under this directory"`
	IncludePatterns []string `json:"include_patterns,omitempty" jsonschema:"globs (ripgrep -g)"`
	ExcludePatterns []string `json:"exclude_patterns,omitempty" jsonschema:"globs to skip (ripgrep -g !)"`
	CaseSensitive   *bool    `json:"case_sensitive,omitempty" jsonschema:"default true"`
	ContextLines    int      `json:"context_lines,omitempty"`
	MaxResults      int      `json:"max_results,omitempty" jsonschema:"per repository"`
	AggregationMode string   `json:"aggregation_mode,omitempty" jsonschema:"accepted for compatibility"`
	ResponseFormat  string   `json:"response_format,omitempty"`
}

type regexGroup struct {
	Count     int                 `json:"count"`
	Truncated bool                `json:"truncated"`
	Commit    string              `json:"commit"`
	Matches   []search.RegexMatch `json:"matches"`
}

type regexOut struct {
	Success       bool                  `json:"success"`
	Matches       []search.RegexMatch   `json:"matches,omitempty"`
	ResultsByRepo map[string]regexGroup `json:"results_by_repo,omitempty"`
	TotalMatches  int                   `json:"total_matches" jsonschema:"matching lines found (may exceed max_results)"`
	Truncated     bool                  `json:"truncated"`
	ReposSearched int                   `json:"repos_searched"`
	Errors        map[string]string     `json:"errors,omitempty"`
	Repositories  []search.RepoInfo     `json:"repositories"`
	SearchEngine  string                `json:"search_engine"`
	SearchTimeMS  float64               `json:"search_time_ms"`
}

type chunkIn struct {
	RepositoryAlias  string `json:"repository_alias"`
	ChunkID          string `json:"chunk_id" jsonschema:"chunk_id from a search_code result"`
	IncludeEmbedding bool   `json:"include_embedding,omitempty" jsonschema:"add the chunk's embedding state"`
}

type chunkOut struct {
	Success bool          `json:"success"`
	Chunk   *search.Chunk `json:"chunk"`
}

type reindexIn struct {
	RepositoryAlias string   `json:"repository_alias" jsonschema:"golden repository (ALIAS or ALIAS-global)"`
	IndexTypes      []string `json:"index_types,omitempty" jsonschema:"semantic and/or fts (both are rebuilt together)"`
	Clear           bool     `json:"clear,omitempty" jsonschema:"rebuild from scratch instead of incrementally"`
}

type reindexOut struct {
	Success    bool     `json:"success"`
	JobID      *string  `json:"job_id"`
	Status     string   `json:"status"`
	IndexTypes []string `json:"index_types"`
	StartedAt  string   `json:"started_at"`
	Message    string   `json:"message"`
}

type indexStatusIn struct {
	RepositoryAlias string `json:"repository_alias"`
}

type indexPart struct {
	Status string `json:"status" jsonschema:"up_to_date, stale, building, not_indexed or failed"`
}

type indexStatusOut struct {
	Success            bool            `json:"success"`
	RepositoryAlias    string          `json:"repository_alias"`
	State              string          `json:"state"`
	Commit             string          `json:"commit" jsonschema:"commit the index was built from"`
	HeadCommit         string          `json:"head_commit"`
	Stale              bool            `json:"stale"`
	VectorsReady       bool            `json:"vectors_ready"`
	Embedder           string          `json:"embedder"`
	ConfiguredEmbedder string          `json:"configured_embedder"`
	BuiltAt            string          `json:"built_at"`
	Error              string          `json:"error,omitempty"`
	Fts                indexPart       `json:"fts"`
	Semantic           indexPart       `json:"semantic"`
	Temporal           indexPart       `json:"temporal"`
	Scip               indexPart       `json:"scip"`
	Manifest           *index.Manifest `json:"manifest,omitempty" jsonschema:"files, chunks, skipped files by reason, sizes and build times"`
}

func searchCodeTool(d *Deps) *mcp.Tool {
	return mcp.New("search_code", "search", auth.QueryRepos, mcp.ReadOnly(),
		func(ctx context.Context, c *auth.Caller, in searchCodeIn) (searchCodeOut, error) {
			if t := temporalParam(in); t != "" {
				return searchCodeOut{}, &mcp.ArgError{Msg: t + ": git-history (temporal) search is not available yet: there is no temporal index", Hint: "drop the temporal parameters to search the current code"}
			}
			aliases, multi := []string{"*-global"}, true
			if in.RepositoryAlias != nil {
				var err error
				if aliases, multi, err = aliasList(in.RepositoryAlias); err != nil {
					return searchCodeOut{}, err
				}
			}
			res, err := d.Search.Code(ctx, search.CodeQuery{Text: in.QueryText, Aliases: aliases, Multi: multi, Limit: in.Limit, MinScore: in.MinScore, Mode: in.SearchMode,
				FilterSpec:    search.FilterSpec{Language: in.Language, ExcludeLanguage: in.ExcludeLanguage, PathFilter: in.PathFilter, ExcludePath: in.ExcludePath, FileExtensions: in.FileExtensions},
				CaseSensitive: in.CaseSensitive, Fuzzy: in.Fuzzy, EditDistance: in.EditDistance, SnippetLines: in.SnippetLines, Regex: in.Regex, Aggregation: in.AggregationMode, ExcludeRepos: in.ExcludePatterns})
			if err != nil {
				return searchCodeOut{}, err
			}
			out := codeResults{TotalResults: len(res.Hits), TotalReposSearched: res.Searched, Errors: res.Errors,
				QueryMetadata: queryMeta{QueryText: in.QueryText, SearchMode: in.SearchMode, ExecutionTimeMS: res.ElapsedMS, RepositoriesSearched: res.Searched, Repositories: res.Repos}}
			if out.QueryMetadata.SearchMode == "" {
				out.QueryMetadata.SearchMode = "semantic"
			}
			if out.QueryMetadata.Repositories == nil {
				out.QueryMetadata.Repositories = []search.RepoInfo{}
			}
			var notes []string
			for _, r := range res.Repos {
				if r.Note != "" {
					notes = append(notes, r.Alias+": "+r.Note)
				}
			}
			out.Warning = strings.Join(notes, "; ")
			if multi && in.ResponseFormat == "grouped" {
				out.ResultsByRepo = map[string]repoGroup{}
				for _, h := range res.Hits {
					g := out.ResultsByRepo[h.RepositoryAlias]
					g.Results = append(g.Results, h)
					g.Count++
					out.ResultsByRepo[h.RepositoryAlias] = g
				}
			} else {
				out.Results = res.Hits
			}
			if len(res.Hits) == 0 && len(res.Errors) > 0 && res.Searched == 0 {
				return searchCodeOut{}, &mcp.ArgError{Msg: "no repository could be searched: " + joinErrors(res.Errors), Hint: "get_index_status shows each repository's index"}
			}
			return searchCodeOut{Success: true, Results: out}, nil
		}).Input(func(s *jsonschema.Schema) {
		mcp.StringOrList(mcp.Prop(s, "repository_alias"))
		mcp.Enum(mcp.Prop(s, "search_mode"), "semantic", "semantic", "fts", "hybrid")
		mcp.Range(mcp.Prop(s, "limit"), 1, 100, 10)
		mcp.Range(mcp.Prop(s, "min_score"), 0, 1, nil)
		mcp.Range(mcp.Prop(s, "edit_distance"), 0, 3, nil)
		mcp.Range(mcp.Prop(s, "snippet_lines"), 0, 50, 5)
		mcp.Enum(mcp.Prop(s, "accuracy"), "", "fast", "balanced", "high")
		mcp.Enum(mcp.Prop(s, "aggregation_mode"), "", "global", "per_repo")
		mcp.Enum(mcp.Prop(s, "response_format"), "", "flat", "grouped")
	})
}

func temporalParam(in searchCodeIn) string {
	switch {
	case in.TimeRange != "":
		return "time_range"
	case in.TimeRangeAll:
		return "time_range_all"
	case in.AtCommit != "":
		return "at_commit"
	case in.IncludeRemoved:
		return "include_removed"
	case in.ShowEvolution:
		return "show_evolution"
	case in.EvolutionLimit != 0:
		return "evolution_limit"
	case in.DiffType != "":
		return "diff_type"
	case in.Author != "":
		return "author"
	case in.ChunkType != "":
		return "chunk_type"
	}
	return ""
}

func joinErrors(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, "; ")
}

func regexTool(d *Deps) *mcp.Tool {
	return mcp.New("regex_search", "search", auth.QueryRepos, mcp.ReadOnly(),
		func(ctx context.Context, c *auth.Caller, in regexIn) (regexOut, error) {
			aliases, multi, err := aliasList(in.RepositoryAlias)
			if err != nil {
				return regexOut{}, err
			}
			cs := in.CaseSensitive == nil || *in.CaseSensitive
			res, err := d.Search.Regex(ctx, search.RegexQuery{Aliases: aliases, Multi: multi, Pattern: in.Pattern, Path: in.Path, Include: in.IncludePatterns, Exclude: in.ExcludePatterns,
				CaseSensitive: cs, ContextLines: in.ContextLines, MaxResults: in.MaxResults})
			if err != nil {
				return regexOut{}, err
			}
			out := regexOut{Success: true, ReposSearched: len(res.Repos), SearchEngine: "cidx-trigram", SearchTimeMS: res.ElapsedMS, Repositories: []search.RepoInfo{}}
			if multi {
				out.Errors = res.Errors
			}
			if multi && in.ResponseFormat == "grouped" {
				out.ResultsByRepo = map[string]regexGroup{}
			} else {
				out.Matches = []search.RegexMatch{}
			}
			for _, r := range res.Repos {
				out.Repositories = append(out.Repositories, r.Info)
				out.TotalMatches += r.TotalMatches
				out.Truncated = out.Truncated || r.Truncated
				if out.ResultsByRepo != nil {
					out.ResultsByRepo[r.Info.Alias] = regexGroup{Count: len(r.Matches), Truncated: r.Truncated, Commit: r.Info.Commit, Matches: r.Matches}
				} else {
					out.Matches = append(out.Matches, r.Matches...)
				}
			}
			return out, nil
		}).Input(func(s *jsonschema.Schema) {
		mcp.StringOrList(mcp.Prop(s, "repository_alias"))
		mcp.Range(mcp.Prop(s, "context_lines"), 0, 10, 0)
		mcp.Range(mcp.Prop(s, "max_results"), 1, 1000, 100)
		mcp.Enum(mcp.Prop(s, "aggregation_mode"), "", "global", "per_repo")
		mcp.Enum(mcp.Prop(s, "response_format"), "flat", "flat", "grouped")
	})
}

func indexTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("get_file_chunk", "search", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in chunkIn) (chunkOut, error) {
				ch, err := d.Search.Chunk(ctx, in.RepositoryAlias, in.ChunkID, in.IncludeEmbedding)
				if err != nil {
					return chunkOut{}, err
				}
				return chunkOut{Success: true, Chunk: ch}, nil
			}),
		mcp.New("trigger_reindex", "system", auth.ManageGoldenRepos, mcp.Mutating(false, true, false),
			func(ctx context.Context, c *auth.Caller, in reindexIn) (reindexOut, error) {
				types := in.IndexTypes
				if len(types) == 0 {
					types = []string{"semantic", "fts"}
				}
				for _, t := range types {
					if t != "semantic" && t != "fts" {
						return reindexOut{}, &mcp.ArgError{Msg: fmt.Sprintf("Invalid index type(s): %s. Valid types: semantic, fts", t), Hint: "temporal and scip indexes are not available yet"}
					}
				}
				j, err := d.Repos.Reindex(ctx, c.Name, strings.TrimSuffix(in.RepositoryAlias, repos.GlobalSuffix), in.Clear)
				if err != nil {
					return reindexOut{}, err
				}
				return reindexOut{Success: true, JobID: &j.ID, Status: "queued", IndexTypes: types, StartedAt: time.Now().UTC().Format(time.RFC3339),
					Message: "reindex started; poll get_job_details, then get_index_status"}, nil
			}),
		mcp.New("get_index_status", "system", auth.RepositoryRead, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in indexStatusIn) (indexStatusOut, error) {
				snap, err := d.Repos.Resolve(ctx, in.RepositoryAlias)
				if err != nil {
					return indexStatusOut{}, err
				}
				st, err := d.Index.Status(ctx, snap.Golden)
				if err != nil {
					return indexStatusOut{}, err
				}
				if snap.Golden == repos.MetaAlias {
					snap.Commit = st.Commit // the catalog has no commit; its index names its tree
				}
				out := indexStatusOut{Success: true, RepositoryAlias: snap.Alias, State: st.State, Commit: st.Commit, HeadCommit: snap.Commit, Stale: st.Commit != "" && st.Commit != snap.Commit,
					VectorsReady: st.VectorsReady, Embedder: st.Embedder, ConfiguredEmbedder: d.Index.Embedder().ID(), BuiltAt: st.BuiltAt, Error: st.Error, Manifest: st.Manifest,
					Temporal: indexPart{"not_indexed"}, Scip: indexPart{"not_indexed"}}
				lex := "not_indexed"
				switch {
				case st.Commit != "" && out.Stale:
					lex = "stale"
				case st.Commit != "":
					lex = "up_to_date"
				case st.State == "building":
					lex = "building"
				case st.State == "failed":
					lex = "failed"
				}
				out.Fts = indexPart{lex}
				out.Semantic = indexPart{lex}
				if lex == "up_to_date" || lex == "stale" {
					if !st.VectorsReady && strings.HasPrefix(st.Error, "embeddings:") {
						out.Semantic.Status = "failed"
					} else if !st.VectorsReady {
						out.Semantic.Status = "building"
					} else if st.Embedder != out.ConfiguredEmbedder {
						out.Semantic.Status = "stale"
					}
				}
				if out.Manifest != nil && len(out.Manifest.SkippedFiles) > 20 {
					man := *out.Manifest
					man.SkippedFiles = man.SkippedFiles[:20]
					out.Manifest = &man
				}
				return out, nil
			}),
	}
}
