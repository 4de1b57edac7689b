package tools

import (
	"context"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/config"
	"github.com/cidx/cidx/internal/health"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/mcp"
)

type jobIn struct {
	JobID string `json:"job_id" jsonschema:"the job_id a tool returned"`
}

type jobDetailsOut struct {
	Success bool      `json:"success"`
	Job     *jobs.Job `json:"job"`
}

type jobStatsOut struct {
	Success    bool       `json:"success"`
	Scope      string     `json:"scope" jsonschema:"all (admins) or own"`
	Statistics jobs.Stats `json:"statistics"`
}

type healthOut struct {
	Success       bool          `json:"success"`
	ServerVersion string        `json:"server_version"`
	Health        health.Report `json:"health"`
}

type configOut struct {
	Success bool   `json:"success"`
	Status  string `json:"status,omitempty"`
	config.Settings
}

type setConfigIn struct {
	RefreshInterval     *int `json:"refresh_interval,omitempty" jsonschema:"seconds between automatic refreshes of golden repositories (>= 60)"`
	MaxTokensPerRequest *int `json:"max_tokens_per_request,omitempty" jsonschema:"token budget of one get_file_content page (1000-20000)"`
	CharsPerToken       *int `json:"chars_per_token,omitempty" jsonschema:"characters counted as one token (3-5)"`
}

func systemTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("get_job_details", "system", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in jobIn) (jobDetailsOut, error) {
				j, err := d.Jobs.Get(ctx, in.JobID, c.Name, c.Role == auth.Admin)
				if err != nil {
					return jobDetailsOut{}, err
				}
				return jobDetailsOut{Success: true, Job: &j}, nil
			}),
		mcp.New("get_job_statistics", "system", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (jobStatsOut, error) {
				all := c.Role == auth.Admin
				st, err := d.Jobs.Statistics(ctx, c.Name, all)
				if err != nil {
					return jobStatsOut{}, err
				}
				scope := "own"
				if all {
					scope = "all"
				}
				return jobStatsOut{Success: true, Scope: scope, Statistics: st}, nil
			}),
		mcp.New("check_health", "system", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (healthOut, error) {
				return healthOut{Success: true, ServerVersion: d.Version, Health: d.Health.Check(ctx)}, nil
			}),
		mcp.New("get_global_config", "golden_repos", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (configOut, error) {
				s, err := d.Settings.Get(ctx)
				if err != nil {
					return configOut{}, err
				}
				return configOut{Success: true, Settings: s}, nil
			}),
		mcp.New("set_global_config", "golden_repos", auth.ManageGoldenRepos, mcp.Mutating(false, true, false),
			func(ctx context.Context, c *auth.Caller, in setConfigIn) (configOut, error) {
				patch := map[string]int{}
				if in.RefreshInterval != nil {
					patch["refresh_interval"] = *in.RefreshInterval
				}
				if in.MaxTokensPerRequest != nil {
					patch["max_tokens_per_request"] = *in.MaxTokensPerRequest
				}
				if in.CharsPerToken != nil {
					patch["chars_per_token"] = *in.CharsPerToken
				}
				if len(patch) == 0 {
					return configOut{}, &mcp.ArgError{Msg: "nothing to change: give refresh_interval, max_tokens_per_request or chars_per_token", Hint: "get_global_config shows the current values"}
				}
				s, err := d.Settings.Update(ctx, patch)
				if err != nil {
					return configOut{}, err
				}
				return configOut{Success: true, Status: "updated", Settings: s}, nil
			}),
	}
}
