package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/mcp"
	"github.com/cidx/cidx/internal/repos"
)

type globalRepo struct {
	Alias         string `json:"alias"`
	RepoName      string `json:"repo_name"`
	URL           string `json:"url"`
	DefaultBranch string `json:"default_branch"`
	State         string `json:"state"`
	Commit        string `json:"commit"`
	LastRefresh   string `json:"last_refresh"`
}

type listGlobalOut struct {
	Success bool         `json:"success"`
	Repos   []globalRepo `json:"repos"`
}

type statusIn struct {
	Alias string `json:"alias" jsonschema:"the global alias, e.g. backend-global"`
}

type statusOut struct {
	Success        bool                  `json:"success"`
	Alias          string                `json:"alias"`
	RepoName       string                `json:"repo_name"`
	URL            string                `json:"url"`
	DefaultBranch  string                `json:"default_branch"`
	State          string                `json:"state"`
	Commit         string                `json:"commit"`
	CreatedAt      string                `json:"created_at"`
	LastRefresh    string                `json:"last_refresh"`
	EnableTemporal bool                  `json:"enable_temporal"`
	Files          int                   `json:"files"`
	Bytes          int64                 `json:"bytes"`
	Languages      []repos.LanguageShare `json:"languages"`
	LastError      string                `json:"last_error,omitempty"`
}

type discoverIn struct {
	SourceType string `json:"source_type,omitempty" jsonschema:"only repositories whose source is a remote URL (remote) or a local path (local)"`
}

type goldenRecord struct {
	Alias          string `json:"alias"`
	RepoURL        string `json:"repo_url"`
	DefaultBranch  string `json:"default_branch"`
	CreatedAt      string `json:"created_at"`
	EnableTemporal bool   `json:"enable_temporal"`
	State          string `json:"state"`
	Commit         string `json:"commit"`
}

type discoverOut struct {
	Success      bool           `json:"success"`
	Repositories []goldenRecord `json:"repositories"`
}

func searchTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("list_global_repos", "search", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (listGlobalOut, error) {
				all, err := d.Repos.List(ctx)
				if err != nil {
					return listGlobalOut{}, err
				}
				out := listGlobalOut{Success: true, Repos: []globalRepo{{Alias: repos.MetaAlias + repos.GlobalSuffix, RepoName: repos.MetaAlias, URL: "local://cidx-meta", State: repos.StateReady}}}
				for _, g := range all {
					out.Repos = append(out.Repos, globalRepo{Alias: g.GlobalAlias(), RepoName: g.Alias, URL: g.DisplayURL(), DefaultBranch: g.Branch, State: g.State, Commit: g.Commit, LastRefresh: g.LastRefresh})
				}
				return out, nil
			}),
		mcp.New("global_repo_status", "search", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in statusIn) (statusOut, error) {
				base, ok := strings.CutSuffix(in.Alias, repos.GlobalSuffix)
				if !ok {
					return statusOut{}, &mcp.ArgError{Msg: fmt.Sprintf("Global repo '%s' not found: global aliases end with -global", in.Alias), Hint: fmt.Sprintf("try %q; list_global_repos lists them", in.Alias+repos.GlobalSuffix)}
				}
				if base == repos.MetaAlias {
					return statusOut{Success: true, Alias: in.Alias, RepoName: base, URL: "local://cidx-meta", State: repos.StateReady, Languages: []repos.LanguageShare{}}, nil
				}
				g, err := d.Repos.Get(ctx, base)
				if err != nil {
					if _, err2 := d.Repos.Resolve(ctx, in.Alias); err2 != nil {
						return statusOut{}, err2 // carries global-alias suggestions
					}
					return statusOut{}, err
				}
				return statusOut{Success: true, Alias: g.GlobalAlias(), RepoName: g.Alias, URL: g.DisplayURL(), DefaultBranch: g.Branch, State: g.State, Commit: g.Commit,
					CreatedAt: g.CreatedAt, LastRefresh: g.LastRefresh, Files: g.Stats.Files, Bytes: g.Stats.Bytes, Languages: g.Stats.Languages, LastError: g.Error}, nil
			}),
		mcp.New("discover_repositories", "repo_management", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in discoverIn) (discoverOut, error) {
				all, err := d.Repos.List(ctx)
				if err != nil {
					return discoverOut{}, err
				}
				out := discoverOut{Success: true, Repositories: []goldenRecord{}}
				for _, g := range all {
					local := strings.HasPrefix(g.Source, "/") || strings.HasPrefix(g.Source, "file://")
					if (in.SourceType == "local" && !local) || (in.SourceType == "remote" && local) {
						continue
					}
					out.Repositories = append(out.Repositories, goldenRecord{Alias: g.Alias, RepoURL: g.DisplayURL(), DefaultBranch: g.Branch, CreatedAt: g.CreatedAt, State: g.State, Commit: g.Commit})
				}
				return out, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.Enum(mcp.Prop(s, "source_type"), "", "remote", "local")
		}),
	}
}

type addGoldenIn struct {
	URL            string         `json:"url" jsonschema:"git URL (https://, ssh://, git://, user@host:path) or an absolute path to a git repository on the server"`
	Alias          string         `json:"alias" jsonschema:"base alias; users read the repository as ALIAS-global"`
	Branch         string         `json:"branch,omitempty" jsonschema:"branch to serve; default: the repository's default branch"`
	EnableTemporal bool           `json:"enable_temporal,omitempty" jsonschema:"index git history (not available yet: must be false)"`
	TemporalOpts   map[string]any `json:"temporal_options,omitempty" jsonschema:"options for temporal indexing (not available yet)"`
}

type jobOut struct {
	Success bool    `json:"success"`
	JobID   *string `json:"job_id"`
	Message string  `json:"message"`
	Alias   string  `json:"alias,omitempty" jsonschema:"the alias users read the repository by"`
}

type aliasIn struct {
	Alias string `json:"alias" jsonschema:"golden repository base alias (ALIAS or ALIAS-global)"`
}

func goldenTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("add_golden_repo", "golden_repos", auth.ManageGoldenRepos, mcp.Mutating(false, false, true),
			func(ctx context.Context, c *auth.Caller, in addGoldenIn) (jobOut, error) {
				if in.EnableTemporal {
					return jobOut{}, &mcp.ArgError{Msg: "enable_temporal: git-history indexing is not available in this version", Hint: "omit enable_temporal"}
				}
				j, err := d.Repos.Add(ctx, c.Name, in.Alias, in.URL, in.Branch)
				if err != nil {
					return jobOut{}, err
				}
				return jobOut{Success: true, JobID: &j.ID, Alias: in.Alias + repos.GlobalSuffix,
					Message: fmt.Sprintf("Golden repository '%s' addition started; poll get_job_details(job_id=%q)", in.Alias, j.ID)}, nil
			}),
		mcp.New("remove_golden_repo", "golden_repos", auth.ManageGoldenRepos, mcp.Mutating(true, true, false),
			func(ctx context.Context, c *auth.Caller, in aliasIn) (jobOut, error) {
				j, err := d.Repos.Remove(ctx, c.Name, in.Alias)
				if err != nil {
					return jobOut{}, err
				}
				return jobOut{Success: true, JobID: &j.ID, Message: fmt.Sprintf("Golden repository '%s' removal started", strings.TrimSuffix(in.Alias, repos.GlobalSuffix))}, nil
			}),
		mcp.New("refresh_golden_repo", "golden_repos", auth.ManageGoldenRepos, mcp.Mutating(false, true, true),
			func(ctx context.Context, c *auth.Caller, in aliasIn) (jobOut, error) {
				j, err := d.Repos.Refresh(ctx, c.Name, in.Alias)
				if err != nil {
					return jobOut{}, err
				}
				return jobOut{Success: true, JobID: &j.ID, Message: fmt.Sprintf("Golden repository '%s' refresh started", strings.TrimSuffix(in.Alias, repos.GlobalSuffix))}, nil
			}),
	}
}
