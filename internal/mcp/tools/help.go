package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/mcp"
)

type noInput struct{}

type categoriesOut struct {
	Success    bool                `json:"success"`
	Categories map[string][]string `json:"categories" jsonschema:"tool category -> [\"tool - summary\"], only tools you may call"`
	Order      []string            `json:"category_order" jsonschema:"categories in display order"`
	TotalTools int                 `json:"total_tools"`
}

type quickRefIn struct {
	Category string `json:"category,omitempty" jsonschema:"only tools of this category"`
	Tool     string `json:"tool,omitempty" jsonschema:"return the full document of this tool"`
}

type quickRefTool struct {
	Name               string `json:"name"`
	Category           string `json:"category"`
	Summary            string `json:"summary"`
	RequiredPermission string `json:"required_permission"`
	Doc                string `json:"doc,omitempty"`
}

type quickRefOut struct {
	Success        bool           `json:"success"`
	TotalTools     int            `json:"total_tools"`
	CategoryFilter *string        `json:"category_filter"`
	Tools          []quickRefTool `json:"tools"`
}

type guideStep struct {
	StepNumber     int    `json:"step_number"`
	Title          string `json:"title"`
	Description    string `json:"description"`
	ExampleCall    string `json:"example_call"`
	ExpectedResult string `json:"expected_result"`
}

type guideError struct {
	Error    string `json:"error"`
	Solution string `json:"solution"`
}

type guide struct {
	Steps             []guideStep  `json:"steps"`
	QuickStartSummary []string     `json:"quick_start_summary"`
	CommonErrors      []guideError `json:"common_errors"`
}

type guideOut struct {
	Success bool  `json:"success"`
	Guide   guide `json:"guide"`
}

func helpTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("get_tool_categories", "meta", auth.None, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (categoriesOut, error) {
				out := categoriesOut{Success: true, Categories: map[string][]string{}, Order: []string{}}
				for _, cat := range Categories {
					var lines []string
					for _, t := range d.Registry.Visible(c.Role) {
						if t.Category == cat.Key {
							lines = append(lines, t.Name+" - "+t.Summary)
						}
					}
					if len(lines) > 0 {
						out.Categories[cat.Title] = lines
						out.Order = append(out.Order, cat.Title)
						out.TotalTools += len(lines)
					}
				}
				return out, nil
			}),
		mcp.New("first_time_user_guide", "meta", auth.None, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (guideOut, error) {
				return guideOut{Success: true, Guide: firstTimeGuide(d, c)}, nil
			}),
		mcp.New("cidx_quick_reference", "meta", auth.QueryRepos, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, in quickRefIn) (quickRefOut, error) {
				visible := d.Registry.Visible(c.Role)
				if in.Tool != "" {
					for _, t := range visible {
						if t.Name == in.Tool {
							return quickRefOut{Success: true, TotalTools: 1, Tools: []quickRefTool{{Name: t.Name, Category: t.Category, Summary: t.Summary, RequiredPermission: permName(t.Permission), Doc: t.Doc}}}, nil
						}
					}
					return quickRefOut{}, &mcp.ArgError{Msg: fmt.Sprintf("unknown tool %q, or not one your role may use", in.Tool), Hint: "call cidx_quick_reference without arguments to list your tools"}
				}
				out := quickRefOut{Success: true, Tools: []quickRefTool{}}
				if in.Category != "" {
					known := false
					for _, cat := range Categories {
						known = known || cat.Key == in.Category
					}
					if !known {
						keys := make([]string, len(Categories))
						for i, cat := range Categories {
							keys[i] = cat.Key
						}
						return out, &mcp.ArgError{Msg: fmt.Sprintf("unknown category %q", in.Category), Hint: "use one of: " + strings.Join(keys, ", ")}
					}
					out.CategoryFilter = &in.Category
				}
				for _, t := range visible {
					if in.Category == "" || t.Category == in.Category {
						out.Tools = append(out.Tools, quickRefTool{Name: t.Name, Category: t.Category, Summary: t.Summary, RequiredPermission: permName(t.Permission)})
					}
				}
				out.TotalTools = len(out.Tools)
				return out, nil
			}),
	}
}

func permName(p auth.Permission) string {
	if p == auth.None {
		return "none"
	}
	return string(p)
}

// firstTimeGuide lists only steps whose tools the caller can use, so the
// guide never points at a tool that does not exist or is forbidden.
func firstTimeGuide(d *Deps, c *auth.Caller) guide {
	can := map[string]bool{}
	for _, t := range d.Registry.Visible(c.Role) {
		can[t.Name] = true
	}
	all := []struct {
		tool string
		step guideStep
	}{
		{"whoami", guideStep{Title: "Check who you are", Description: "See your user name, role and the permissions it grants.", ExampleCall: "whoami()", ExpectedResult: `{"success": true, "username": "alice", "role": "normal_user", ...}`}},
		{"list_global_repos", guideStep{Title: "List the repositories", Description: "Every repository you can read, named ALIAS-global, and cidx-meta-global, the catalog that describes them.", ExampleCall: "list_global_repos()", ExpectedResult: `{"success": true, "repos": [{"alias": "backend-global", ...}]}`}},
		{"get_file_content", guideStep{Title: "Read a repository's description", Description: "The catalog has one ALIAS.md per repository: summary, languages, layout, last commit.", ExampleCall: `get_file_content(repository_alias="cidx-meta-global", file_path="backend.md")`, ExpectedResult: "the markdown description"}},
		{"global_repo_status", guideStep{Title: "Check a repository's state", Description: "Commit served, last refresh, size and languages.", ExampleCall: `global_repo_status(alias="backend-global")`, ExpectedResult: `{"success": true, "state": "ready", "commit": "..."}`}},
		{"search_code", guideStep{Title: "Search by meaning or by words", Description: "Natural-language or identifier queries over every repository (or one); results carry file, lines, a snippet and a chunk_id.", ExampleCall: `search_code(query_text="where do we retry failed HTTP requests", limit=5)`, ExpectedResult: `{"success": true, "results": {"results": [{"file_path": "...", "line_number": 42, ...}]}}`}},
		{"regex_search", guideStep{Title: "Find every exact match", Description: "RE2 regular expressions, answered from the trigram index: exactly what ripgrep would find.", ExampleCall: `regex_search(repository_alias="backend-global", pattern="func \w+Handler\(")`, ExpectedResult: `{"success": true, "matches": [{"file_path": "...", "line_number": 10, "column": 1, ...}]}`}},
		{"directory_tree", guideStep{Title: "See the layout", Description: "A depth-limited tree of directories and files.", ExampleCall: `directory_tree(repository_alias="backend-global", max_depth=2)`, ExpectedResult: "a tree_string you can read at a glance"}},
		{"browse_directory", guideStep{Title: "List files with metadata", Description: "Files under a directory with size, language and date; filter by language or glob.", ExampleCall: `browse_directory(repository_alias="backend-global", path="src", language="go")`, ExpectedResult: `{"success": true, "structure": {"files": [...]}}`}},
		{"get_file_content", guideStep{Title: "Read a file, page by page", Description: "Reads are bounded by a token budget and cut at line boundaries; follow metadata.next_offset to continue. metadata.content_hash is the SHA-256 of the whole file.", ExampleCall: `get_file_content(repository_alias="backend-global", file_path="src/main.go")`, ExpectedResult: `{"content": [{"type": "text", "text": "..."}], "metadata": {"has_more": true, "next_offset": 231, ...}}`}},
		{"cidx_quick_reference", guideStep{Title: "Look up any tool", Description: "Every tool you may use, by category; pass tool=NAME for its full document.", ExampleCall: `cidx_quick_reference(tool="get_file_content")`, ExpectedResult: "the full document"}},
	}
	var g guide
	for _, s := range all {
		if !can[s.tool] {
			continue
		}
		st := s.step
		st.StepNumber = len(g.Steps) + 1
		g.Steps = append(g.Steps, st)
		g.QuickStartSummary = append(g.QuickStartSummary, fmt.Sprintf("%d. %s: %s", st.StepNumber, st.Title, st.ExampleCall))
	}
	g.CommonErrors = []guideError{
		{"Global repository 'X' not found", "Global aliases end with -global; use list_global_repos and pick one of its aliases (the error lists close matches)."},
		{"File not found", "Paths are relative to the repository root; use browse_directory or list_files to find the exact path."},
		{"permission denied: tool ... requires permission ...", "Your role lacks it; whoami shows your permissions, an administrator can change your role."},
		{"path ... leaves the repository", "Use a relative path without '..'; absolute paths, .git and symlinks out of the repository are refused."},
		{"repository ... is not readable yet", "It is still being cloned; poll get_job_details with the job_id from add_golden_repo."},
	}
	return g
}

type whoamiOut struct {
	Success      bool     `json:"success"`
	Username     string   `json:"username"`
	Role         string   `json:"role"`
	Permissions  []string `json:"permissions"`
	VisibleTools int      `json:"visible_tools" jsonschema:"how many tools your role may call"`
}

type listUsersOut struct {
	Success bool        `json:"success"`
	Users   []auth.User `json:"users"`
	Total   int         `json:"total"`
}

type createUserIn struct {
	Username string `json:"username" jsonschema:"new user's name: letters, digits, '.', '_' or '-'"`
	Password string `json:"password" jsonschema:"12-128 characters mixing at least three of lower case, upper case, digits, symbols"`
	Role     string `json:"role" jsonschema:"normal_user (read), power_user (read and write), admin (everything)"`
}

type createUserOut struct {
	Success bool       `json:"success"`
	User    *auth.User `json:"user"`
	Message string     `json:"message"`
}

func userTools(d *Deps) []*mcp.Tool {
	return []*mcp.Tool{
		mcp.New("whoami", "user_management", auth.None, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (whoamiOut, error) {
				out := whoamiOut{Success: true, Username: c.Name, Role: string(c.Role), Permissions: []string{}}
				for _, p := range c.Role.Permissions() {
					out.Permissions = append(out.Permissions, string(p))
				}
				out.VisibleTools = len(d.Registry.Visible(c.Role))
				return out, nil
			}),
		mcp.New("list_users", "user_management", auth.ManageUsers, mcp.ReadOnly(),
			func(ctx context.Context, c *auth.Caller, _ noInput) (listUsersOut, error) {
				users, err := d.Auth.ListUsers(ctx)
				if err != nil {
					return listUsersOut{}, err
				}
				return listUsersOut{Success: true, Users: users, Total: len(users)}, nil
			}),
		mcp.New("create_user", "user_management", auth.ManageUsers, mcp.Mutating(false, false, false),
			func(ctx context.Context, c *auth.Caller, in createUserIn) (createUserOut, error) {
				role, err := auth.ParseRole(in.Role)
				if err != nil {
					return createUserOut{}, err
				}
				u, err := d.Auth.CreateUser(ctx, in.Username, role, in.Password)
				if err != nil {
					return createUserOut{}, err
				}
				return createUserOut{Success: true, User: &u, Message: fmt.Sprintf("User '%s' created successfully; create a token for it with 'cidx token create %s'", u.Name, u.Name)}, nil
			}).Input(func(s *jsonschema.Schema) {
			mcp.Enum(mcp.Prop(s, "role"), "", "normal_user", "power_user", "admin")
		}),
	}
}
