// Package tools defines cidx's MCP tools, one file per category. Each tool
// is a typed In/Out pair and a thin handler that validates, calls one
// domain service, and shapes the result; none of them runs git, opens files
// or writes SQL itself.
package tools

import (
	"encoding/json"
	"time"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/config"
	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/health"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/mcp"
	"github.com/cidx/cidx/internal/repos"
	"github.com/cidx/cidx/internal/search"
)

// Deps are the services the tools call.
type Deps struct {
	Auth     *auth.Service
	Repos    *repos.Service
	Jobs     *jobs.Manager
	Settings *config.Service
	Files    *files.Service
	Health   *health.Checker
	Search   *search.Service
	Index    *index.Manager
	Registry *mcp.Registry
	Version  string
}

// Categories maps each quick-reference category key to the heading
// get_tool_categories shows, in display order.
var Categories = []struct{ Key, Title string }{
	{"search", "SEARCH & DISCOVERY"},
	{"files", "FILES & BROWSING"},
	{"git_exploration", "GIT HISTORY & EXPLORATION"},
	{"git_operations", "GIT OPERATIONS"},
	{"scip", "SCIP CODE INTELLIGENCE"},
	{"repo_management", "REPOSITORY MANAGEMENT"},
	{"golden_repos", "GOLDEN REPOSITORY ADMINISTRATION"},
	{"system", "SYSTEM & JOBS"},
	{"user_management", "USERS & IDENTITY"},
	{"ssh_keys", "SSH KEYS"},
	{"meta", "HELP & GUIDANCE"},
}

// Register adds every tool to d.Registry, in the order tools are listed.
func Register(d *Deps) error {
	all := [][]*mcp.Tool{
		helpTools(d),
		userTools(d),
		append([]*mcp.Tool{searchCodeTool(d), regexTool(d)}, searchTools(d)...),
		fileTools(d),
		indexTools(d),
		goldenTools(d),
		systemTools(d),
	}
	for _, group := range all {
		if err := d.Registry.Add(group...); err != nil {
			return err
		}
	}
	return nil
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
