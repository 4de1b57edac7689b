package tools

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/mcp"
)

type fileContentIn struct {
	RepositoryAlias string `json:"repository_alias" jsonschema:"repository to read, e.g. backend-global (see list_global_repos)"`
	FilePath        string `json:"file_path" jsonschema:"path relative to the repository root, e.g. src/main.go"`
	Offset          int    `json:"offset,omitempty" jsonschema:"1-based line to start at; pass metadata.next_offset to continue"`
	Limit           int    `json:"limit,omitempty" jsonschema:"maximum lines to return; the token budget applies anyway"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type fileMeta struct {
	Path                string  `json:"path"`
	RepositoryAlias     string  `json:"repository_alias"`
	Commit              string  `json:"commit"`
	Size                int64   `json:"size"`
	ModifiedAt          string  `json:"modified_at"`
	Language            *string `json:"language"`
	TotalLines          int     `json:"total_lines"`
	Offset              int     `json:"offset"`
	Limit               *int    `json:"limit"`
	ReturnedLines       int     `json:"returned_lines"`
	HasMore             bool    `json:"has_more"`
	NextOffset          *int    `json:"next_offset" jsonschema:"offset to pass to read the next page; null at the end"`
	EstimatedTokens     int     `json:"estimated_tokens"`
	MaxTokensPerRequest int     `json:"max_tokens_per_request"`
	Truncated           bool    `json:"truncated" jsonschema:"the token budget ended this page"`
	TruncatedAtLine     *int    `json:"truncated_at_line"`
	LineCut             bool    `json:"line_cut" jsonschema:"one line longer than the whole budget was cut; its rest is skipped"`
	RequiresPagination  bool    `json:"requires_pagination"`
	PaginationHint      *string `json:"pagination_hint"`
	ContentHash         string  `json:"content_hash" jsonschema:"SHA-256 of the whole file, whatever page was read"`
}

type fileContentOut struct {
	Success  bool        `json:"success"`
	Content  []textBlock `json:"content"`
	Metadata fileMeta    `json:"metadata"`
}

type fileEntry struct {
	Path       string  `json:"path"`
	SizeBytes  int64   `json:"size_bytes"`
	ModifiedAt string  `json:"modified_at"`
	Language   *string `json:"language"`
}

func entries(in []files.FileInfo) []fileEntry {
	out := make([]fileEntry, len(in))
	for i, f := range in {
		out[i] = fileEntry{Path: f.Path, SizeBytes: f.SizeBytes, ModifiedAt: iso(f.ModifiedAt), Language: f.Language}
	}
	return out
}

type listFilesIn struct {
	RepositoryAlias any    `json:"repository_alias" jsonschema:"a repository alias, or a list of them; wildcards such as *-global are expanded"`
	Path            string `json:"path,omitempty" jsonschema:"only files under this directory"`
	PathPattern     string `json:"path_pattern,omitempty" jsonschema:"glob: without a slash it matches file names at any depth (*.py); with a slash it matches the path from the root (src/**/*.go)"`
	Language        string `json:"language,omitempty" jsonschema:"language name or file extension, e.g. go or .py"`
	Limit           int    `json:"limit,omitempty" jsonschema:"maximum files per repository"`
	ResponseFormat  string `json:"response_format,omitempty" jsonschema:"flat: one list; grouped: results_by_repo (several repositories only)"`
}

type listFilesOut struct {
	Success         bool                     `json:"success"`
	Files           []fileEntry              `json:"files" jsonschema:"several repositories: paths are ALIAS:PATH"`
	Total           int                      `json:"total" jsonschema:"matches before the limit"`
	Truncated       bool                     `json:"truncated"`
	RepositoryAlias string                   `json:"repository_alias,omitempty"`
	Commit          *string                  `json:"commit,omitempty"`
	TotalFiles      int                      `json:"total_files,omitempty"`
	ReposSearched   int                      `json:"repos_searched,omitempty"`
	Errors          map[string]string        `json:"errors,omitempty" jsonschema:"alias -> error"`
	ResultsByRepo   map[string]repoFileGroup `json:"results_by_repo,omitempty"`
}

type repoFileGroup struct {
	Count     int         `json:"count"`
	Truncated bool        `json:"truncated"`
	Commit    string      `json:"commit"`
	Files     []fileEntry `json:"files"`
}

type browseIn struct {
	RepositoryAlias string `json:"repository_alias" jsonschema:"repository to browse, e.g. backend-global"`
	Path            string `json:"path,omitempty" jsonschema:"directory to list; default the root"`
	Recursive       *bool  `json:"recursive,omitempty" jsonschema:"include files in sub-directories (default true); false lists direct children only"`
	PathPattern     string `json:"path_pattern,omitempty" jsonschema:"glob: without a slash it matches file names at any depth (*.py); with a slash it matches the path from the root (src/**/*.go)"`
	Language        string `json:"language,omitempty" jsonschema:"language name or file extension, e.g. python or py"`
	Limit           int    `json:"limit,omitempty" jsonschema:"maximum files to return"`
	SortBy          string `json:"sort_by,omitempty" jsonschema:"path, size or modified_at"`
}

type structure struct {
	Path      string      `json:"path"`
	Files     []fileEntry `json:"files"`
	Total     int         `json:"total" jsonschema:"matches before the limit"`
	Returned  int         `json:"returned"`
	Truncated bool        `json:"truncated"`
}

type browseOut struct {
	Success         bool      `json:"success"`
	RepositoryAlias string    `json:"repository_alias"`
	Commit          string    `json:"commit"`
	Structure       structure `json:"structure"`
}

type treeIn struct {
	RepositoryAlias string   `json:"repository_alias" jsonschema:"repository, e.g. backend-global"`
	Path            string   `json:"path,omitempty" jsonschema:"sub-directory to start from"`
	MaxDepth        int      `json:"max_depth,omitempty" jsonschema:"directory levels to show"`
	MaxFilesPerDir  int      `json:"max_files_per_dir,omitempty" jsonschema:"files shown per directory before [+N more files]"`
	IncludePatterns []string `json:"include_patterns,omitempty" jsonschema:"only files whose name matches one of these globs"`
	ExcludePatterns []string `json:"exclude_patterns,omitempty" jsonschema:"skip entries whose name matches (added to the defaults: node_modules, vendor, ...)"`
	ShowStats       bool     `json:"show_stats,omitempty" jsonschema:"append directory and file counts"`
	IncludeHidden   bool     `json:"include_hidden,omitempty" jsonschema:"show dot-files and dot-directories"`
}

type treeOut struct {
	Success          bool           `json:"success"`
	RepositoryAlias  string         `json:"repository_alias"`
	Commit           string         `json:"commit"`
	TreeString       string         `json:"tree_string"`
	Root             map[string]any `json:"root" jsonschema:"the tree as data: {name, path, is_directory, truncated, hidden_count, children: [...]}"`
	TotalDirectories int            `json:"total_directories"`
	TotalFiles       int            `json:"total_files"`
	MaxDepthReached  bool           `json:"max_depth_reached"`
	RootPath         string         `json:"root_path"`
}

func fileTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("get_file_content", "files", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in fileContentIn) (fileContentOut, error) {
				pg, src, err := d.Files.Read(ctx, in.RepositoryAlias, in.FilePath, in.Offset, in.Limit)
				if err != nil {
					return fileContentOut{}, err
				}
				out := fileContentOut{Success: true, Content: []textBlock{}, Metadata: fileMeta{
					Path: pg.Path, RepositoryAlias: src.Alias, Commit: src.Commit, Size: pg.Size, ModifiedAt: iso(pg.ModifiedAt), Language: pg.Language,
					TotalLines: pg.TotalLines, Offset: pg.Offset, Limit: pg.Limit, ReturnedLines: pg.ReturnedLines,
					HasMore: pg.HasMore, NextOffset: pg.NextOffset, EstimatedTokens: pg.EstimatedTokens, MaxTokensPerRequest: pg.MaxTokensPerRequest,
					Truncated: pg.Truncated, TruncatedAtLine: pg.TruncatedAtLine, LineCut: pg.LineCut,
					RequiresPagination: pg.RequiresPagination, PaginationHint: pg.PaginationHint, ContentHash: pg.ContentHash,
				}}
				if pg.Content != "" {
					out.Content = []textBlock{{Type: "text", Text: pg.Content}}
				}
				return out, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.Range(mcp.Prop(s, "offset"), 1, 0, nil)
			mcp.Range(mcp.Prop(s, "limit"), 1, 0, nil)
		}),
		mcp.New("list_files", "files", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in listFilesIn) (listFilesOut, error) {
				aliases, multi, err := aliasList(in.RepositoryAlias)
				if err != nil {
					return listFilesOut{}, err
				}
				opts := files.ListOptions{Dir: in.Path, Recursive: true, Pattern: in.PathPattern, Language: in.Language, Limit: in.Limit}
				if !multi {
					l, err := d.Files.List(ctx, aliases[0], opts)
					if err != nil {
						return listFilesOut{}, err
					}
					return listFilesOut{Success: true, Files: entries(l.Files), Total: l.Total, Truncated: l.Truncated, RepositoryAlias: l.Source.Alias, Commit: &l.Source.Commit}, nil
				}
				many, err := d.Files.ListMany(ctx, aliases, opts)
				if err != nil {
					return listFilesOut{}, err
				}
				out := listFilesOut{Success: true, Files: []fileEntry{}, ReposSearched: len(many.Listings), Errors: many.Errors}
				if in.ResponseFormat == "grouped" {
					out.ResultsByRepo = map[string]repoFileGroup{}
					for _, l := range many.Listings {
						out.ResultsByRepo[l.Source.Alias] = repoFileGroup{Count: len(l.Files), Truncated: l.Truncated, Commit: l.Source.Commit, Files: entries(l.Files)}
						out.TotalFiles += len(l.Files)
						out.Total += l.Total
						out.Truncated = out.Truncated || l.Truncated
					}
					return out, nil
				}
				for _, l := range many.Listings {
					out.Total += l.Total
					for _, e := range entries(l.Files) {
						e.Path = l.Source.Alias + ":" + e.Path
						out.Files = append(out.Files, e)
					}
					out.TotalFiles += len(l.Files)
					out.Truncated = out.Truncated || l.Truncated
				}
				return out, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.StringOrList(mcp.Prop(s, "repository_alias"))
			mcp.Range(mcp.Prop(s, "limit"), 1, 5000, 500)
			mcp.Enum(mcp.Prop(s, "response_format"), "flat", "flat", "grouped")
		}),
		mcp.New("browse_directory", "files", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in browseIn) (browseOut, error) {
				rec := in.Recursive == nil || *in.Recursive
				l, err := d.Files.List(ctx, in.RepositoryAlias, files.ListOptions{Dir: in.Path, Recursive: rec, Pattern: in.PathPattern, Language: in.Language, SortBy: in.SortBy, Limit: in.Limit})
				if err != nil {
					return browseOut{}, err
				}
				p := l.Dir
				if p == "" {
					p = "/"
				}
				return browseOut{Success: true, RepositoryAlias: l.Source.Alias, Commit: l.Source.Commit,
					Structure: structure{Path: p, Files: entries(l.Files), Total: l.Total, Returned: len(l.Files), Truncated: l.Truncated}}, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.Range(mcp.Prop(s, "limit"), 1, 500, 500)
			mcp.Enum(mcp.Prop(s, "sort_by"), "path", "path", "size", "modified_at")
		}),
		mcp.New("directory_tree", "files", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in treeIn) (treeOut, error) {
				r, src, err := d.Files.Tree(ctx, in.RepositoryAlias, files.TreeOptions{Path: in.Path, MaxDepth: in.MaxDepth, MaxFilesPerDir: in.MaxFilesPerDir,
					Include: in.IncludePatterns, Exclude: in.ExcludePatterns, ShowStats: in.ShowStats, IncludeHidden: in.IncludeHidden})
				if err != nil {
					return treeOut{}, err
				}
				return treeOut{Success: true, RepositoryAlias: src.Alias, Commit: src.Commit, TreeString: r.TreeString, Root: nodeMap(r.Root),
					TotalDirectories: r.TotalDirectories, TotalFiles: r.TotalFiles, MaxDepthReached: r.MaxDepthReached, RootPath: r.Root.Path}, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.Range(mcp.Prop(s, "max_depth"), 1, 10, 3)
			mcp.Range(mcp.Prop(s, "max_files_per_dir"), 1, 200, 50)
		}),
	}
}

// nodeMap renders a tree node with the contract's field names.
func nodeMap(n *files.Node) map[string]any {
	m := map[string]any{"name": n.Name, "path": n.Path, "is_directory": n.IsDirectory, "truncated": n.Truncated, "hidden_count": n.HiddenCount}
	if n.IsDirectory {
		children := make([]any, len(n.Children))
		for i, c := range n.Children {
			children[i] = nodeMap(c)
		}
		m["children"] = children
	} else {
		m["children"] = nil
	}
	return m
}

// aliasList accepts a string, a list of strings, or a string holding a
// JSON list (as some clients send), and says whether several were asked.
func aliasList(v any) ([]string, bool, error) {
	switch a := v.(type) {
	case string:
		if len(a) > 1 && a[0] == '[' {
			var list []string
			if err := jsonUnmarshal(a, &list); err == nil {
				return aliasList(anySlice(list))
			}
		}
		if a == "" {
			return nil, false, &mcp.ArgError{Msg: "repository_alias is empty", Hint: "use list_global_repos to see aliases"}
		}
		// A wildcard names several repositories even as a plain string.
		return []string{a}, strings.ContainsAny(a, "*?["), nil
	case []any:
		var out []string
		for _, x := range a {
			s, ok := x.(string)
			if !ok || s == "" {
				return nil, false, &mcp.ArgError{Msg: "repository_alias list must contain non-empty strings"}
			}
			out = append(out, s)
		}
		if len(out) == 0 {
			return nil, false, &mcp.ArgError{Msg: "repository_alias list is empty", Hint: "give at least one alias, or a wildcard such as *-global"}
		}
		return out, true, nil
	}
	return nil, false, &mcp.ArgError{Msg: "repository_alias must be a string or a list of strings"}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}
