// Package app wires cidx together: it is the only place that builds every
// service from the configuration.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	cauth "github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/config"
	"github.com/cidx/cidx/internal/embed"
	"github.com/cidx/cidx/internal/files"
	"github.com/cidx/cidx/internal/gitcli"
	"github.com/cidx/cidx/internal/health"
	"github.com/cidx/cidx/internal/index"
	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/mcp"
	"github.com/cidx/cidx/internal/mcp/tools"
	"github.com/cidx/cidx/internal/repos"
	"github.com/cidx/cidx/internal/search"
	"github.com/cidx/cidx/internal/store"
)

// Version is cidx's version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// App holds every service for one data directory.
type App struct {
	DataDir  string
	File     config.File
	DB       *store.DB
	Auth     *cauth.Service
	Jobs     *jobs.Manager
	Repos    *repos.Service
	Settings *config.Service
	Files    *files.Service
	Health   *health.Checker
	Registry *mcp.Registry
	Index    *index.Manager
	Search   *search.Service
	Log      *slog.Logger
}

// Open builds the services over dataDir, creating it if needed.
func Open(ctx context.Context, dataDir string, log *slog.Logger) (*App, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dataDir, err)
	}
	file, err := config.LoadFile(dataDir)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, filepath.Join(dataDir, "cidx.db"))
	if err != nil {
		return nil, err
	}
	a := &App{DataDir: dataDir, File: file, DB: db, Log: log}
	a.Auth = cauth.NewService(db)
	a.Jobs = jobs.NewManager(db, log)
	a.Settings = config.NewService(db, file.Settings)
	a.Repos, err = repos.NewService(db, a.Jobs, gitcli.Default, dataDir)
	if err != nil {
		db.Close()
		return nil, err
	}
	e := file.Embedding
	emb, err := embed.New(embed.Config{Provider: e.Provider, URL: e.URL, Model: e.Model, APIKey: e.Key(), Dimensions: e.Dimensions, BatchSize: e.BatchSize, Concurrency: e.Concurrency})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("embedding configuration: %w", err)
	}
	ic := file.Index
	a.Index = index.NewManager(db, gitcli.Default, dataDir, emb, index.Config{MaxFileBytes: ic.MaxFileBytes, Exclude: ic.Exclude, IndexGenerated: ic.IndexGenerated, Int8Vectors: ic.Int8(), ReaderMemoryBytes: int64(ic.ReaderMemoryMB) << 20}, log)
	a.Repos.SetIndexer(a.Index)
	a.Search = search.NewService(a.Repos, a.Index)
	a.Files = files.NewService(a.Repos, func(ctx context.Context) (files.Budget, error) {
		s, err := a.Settings.Get(ctx)
		return files.Budget{MaxTokens: s.MaxTokensPerRequest, CharsPerToken: s.CharsPerToken}, err
	})
	a.Health = &health.Checker{DB: db, DataDir: dataDir, Jobs: a.Jobs, Started: time.Now()}
	a.Registry = mcp.NewRegistry()
	if err := tools.Register(&tools.Deps{Auth: a.Auth, Repos: a.Repos, Jobs: a.Jobs, Settings: a.Settings, Files: a.Files,
		Health: a.Health, Registry: a.Registry, Search: a.Search, Index: a.Index, Version: Version}); err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}

// Close releases the database.
func (a *App) Close() error { return a.DB.Close() }

// Instructions are sent to MCP clients when they connect.
const Instructions = `cidx gives governed access to git repositories. Repositories are read as ALIAS-global (list_global_repos); cidx-meta-global holds one ALIAS.md description per repository. Find code with search_code (by meaning or words) and regex_search (exact); read files with get_file_content (token-bounded pages: follow metadata.next_offset), explore with directory_tree and browse_directory. whoami shows your role; cidx_quick_reference(tool=NAME) gives any tool's full document (also resource cidx://docs/tools/NAME). A failed call returns isError with {success:false, error, hint}.`

// MCPServer builds the MCP server. defaultUser is who runs requests that
// carry no verified token (stdio, or anonymous local HTTP); "" refuses them.
func (a *App) MCPServer(defaultUser string) *sdk.Server {
	return a.Registry.Server(mcp.ServerOptions{
		Name: "cidx", Version: Version, Logger: a.Log, Instructions: Instructions,
		Identify: func(ctx context.Context, ti *auth.TokenInfo) (*cauth.Caller, error) {
			if ti != nil && ti.UserID != "" {
				role, _ := ti.Extra["role"].(string)
				return &cauth.Caller{Name: ti.UserID, Role: cauth.Role(role)}, nil
			}
			if defaultUser == "" {
				return nil, errors.New("not authenticated: send Authorization: Bearer <token>")
			}
			c, err := a.Auth.Caller(ctx, defaultUser)
			if err != nil {
				return nil, fmt.Errorf("user %s: %w", defaultUser, err)
			}
			return &c, nil
		},
	})
}

// StartBackground runs the job workers and the refresh scheduler until ctx ends.
func (a *App) StartBackground(ctx context.Context) {
	a.Jobs.Start(ctx, 2)
	a.reindexOutdated(ctx)
	// The catalog index may be missing (first start of this version) or
	// built with another embedder; an unchanged one costs a directory read.
	go func() {
		if err := a.Repos.IndexCatalog(ctx); err != nil {
			a.Log.Warn("catalog index", "err", err)
		}
		a.warmIndexes(ctx)
	}()
	go a.scheduleRefreshes(ctx)
}

// warmIndexes opens every served index once, so that the first search
// after a start does not pay for loading it (vectors are decoded into
// memory, chunk-to-file tables read).
func (a *App) warmIndexes(ctx context.Context) {
	all, err := a.Repos.List(ctx)
	if err != nil {
		return
	}
	aliases := []string{repos.MetaAlias}
	for _, g := range all {
		aliases = append(aliases, g.Alias)
	}
	for _, alias := range aliases {
		if ctx.Err() != nil {
			return
		}
		if r, err := a.Index.Open(ctx, alias); err == nil {
			r.Release()
		}
	}
}

// reindexOutdated queues a full reindex of every repository whose index
// was written in an older format, which this version does not serve, and
// an incremental one (it re-embeds every chunk, reads no unchanged file)
// of every repository embedded by another embedder than the configured
// one: changing the embedder in config.yaml takes effect at the restart.
func (a *App) reindexOutdated(ctx context.Context) {
	all, err := a.Repos.List(ctx)
	if err != nil {
		return
	}
	for _, g := range all {
		if g.State != repos.StateReady {
			continue
		}
		switch {
		case a.Index.Outdated(ctx, g.Alias):
			if _, err := a.Repos.Reindex(ctx, "system", g.Alias, true); err == nil {
				a.Log.Info("index format changed: reindex queued", "repo", g.Alias)
			}
		case a.Index.ForeignVectors(ctx, g.Alias):
			if _, err := a.Repos.Reindex(ctx, "system", g.Alias, false); err == nil {
				a.Log.Info("embedder changed: re-embedding queued", "repo", g.Alias)
			}
		}
	}
}

// scheduleRefreshes queues a refresh of every ready golden repository whose
// last refresh is older than the refresh_interval setting.
func (a *App) scheduleRefreshes(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s, err := a.Settings.Get(ctx)
		if err != nil {
			continue
		}
		all, err := a.Repos.List(ctx)
		if err != nil {
			continue
		}
		for _, g := range all {
			last, err := time.Parse(time.RFC3339Nano, g.LastRefresh)
			if g.State != repos.StateReady || err != nil || time.Since(last) < time.Duration(s.RefreshInterval)*time.Second {
				continue
			}
			if _, err := a.Repos.Refresh(ctx, "system", g.Alias); err == nil {
				a.Log.Info("scheduled refresh", "repo", g.Alias)
			}
		}
	}
}
