package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cidx/cidx/internal/app"
	"github.com/cidx/cidx/internal/config"
	"github.com/cidx/cidx/internal/web"
)

func serveCmd(g *globals) *cobra.Command {
	var (
		httpAddr  string
		stdio     bool
		user      string
		repoSpecs []string
		anonymous string
		pprofAddr string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP over HTTP (default 127.0.0.1:8383) or standard input/output",
		Long: `Serve MCP over Streamable HTTP at /mcp (bearer tokens required) or, with
--stdio, on standard input/output as one user (for Claude Desktop, Cursor and
other clients that start the server themselves).

The first start on an empty data directory creates the user admin and prints
its token once.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			tuneGC()
			a, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer a.Close()
			httpSet := cmd.Flags().Changed("http")
			if httpAddr == "" {
				httpAddr = a.File.HTTP
			}
			// In stdio mode standard output carries the protocol: everything
			// meant for a person goes to standard error.
			out := cmd.OutOrStdout()
			if stdio {
				out = cmd.ErrOrStderr()
			}
			token, created, err := a.Auth.Bootstrap(ctx)
			if err != nil {
				return err
			}
			for _, spec := range repoSpecs {
				if err := ensureRepo(ctx, a, spec, out); err != nil {
					return err
				}
			}
			a.StartBackground(ctx)
			if pprofAddr != "" {
				if !isLoopback(pprofAddr) {
					return fmt.Errorf("--pprof must be a loopback address, not %s", pprofAddr)
				}
				go http.ListenAndServe(pprofAddr, pprofMux())
			}

			errc := make(chan error, 2)
			if !stdio || httpSet {
				if anonymous != "" {
					if _, err := a.Auth.GetUser(ctx, anonymous); err != nil {
						return fmt.Errorf("--allow-anonymous-as: %w", err)
					}
					if !isLoopback(httpAddr) {
						return fmt.Errorf("--allow-anonymous-as is only allowed on a loopback address, not %s", httpAddr)
					}
				}
				ln, err := net.Listen("tcp", httpAddr)
				if err != nil {
					return fmt.Errorf("listen on %s: %w (is another cidx running? use --http to pick another address)", httpAddr, err)
				}
				base := a.File.BaseURL
				if base == "" {
					base = "http://" + ln.Addr().String()
				}
				h := web.Handler(web.Options{Server: a.MCPServer(anonymous), Verify: a.Auth.VerifyToken, BaseURL: a.File.BaseURL, Anonymous: anonymous != "", Logger: a.Log})
				srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
				go func() { errc <- srv.Serve(ln) }()
				go func() {
					<-ctx.Done()
					sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					srv.Shutdown(sctx)
				}()
				printBanner(out, a, base, token, created)
			} else if created {
				fmt.Fprintf(out, "Created user admin. Its token (shown once, keep it): %s\n", token)
			}
			if stdio {
				if user == "" {
					user = "admin"
				}
				if _, err := a.Auth.GetUser(ctx, user); err != nil {
					return fmt.Errorf("--user: %w (create it with 'cidx user add')", err)
				}
				go func() { errc <- a.MCPServer(user).Run(ctx, &sdk.StdioTransport{}) }()
			}
			// Start-up (package initialisers, the embedder's model) leaves
			// garbage that a lazy collector would keep for long: collect it
			// now so an idle server is small.
			debug.FreeOSMemory()
			select {
			case err := <-errc:
				if errors.Is(err, http.ErrServerClosed) || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || ctx.Err() != nil {
					return nil
				}
				return err
			case <-ctx.Done():
				return nil
			}
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "HTTP listen address (default "+config.DefaultHTTPAddr+", or config.yaml's http)")
	cmd.Flags().BoolVar(&stdio, "stdio", false, "serve MCP on standard input/output (HTTP only if --http is also given)")
	cmd.Flags().StringVar(&user, "user", "", "user the --stdio session runs as (default admin)")
	cmd.Flags().StringArrayVar(&repoSpecs, "repo", nil, "register ALIAS=SOURCE as a golden repository at start if it is not registered yet (repeatable)")
	cmd.Flags().StringVar(&anonymous, "allow-anonymous-as", "", "testing only: run HTTP requests without a token as this user (loopback addresses only)")
	cmd.Flags().MarkHidden("allow-anonymous-as")
	cmd.Flags().StringVar(&pprofAddr, "pprof", "", "serve Go profiling endpoints (/debug/pprof/) on this loopback address")
	cmd.Flags().MarkHidden("pprof")
	return cmd
}

// tuneGC trades memory for CPU: a server's heap is small (tens of MB) and
// most of what a request allocates is garbage at once, so collecting four
// times less often costs little memory and saves a good share of CPU.
// GOGC and GOMEMLIMIT in the environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

func pprofMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/debug/pprof/", pprof.Index)
	m.HandleFunc("/debug/pprof/profile", pprof.Profile)
	m.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	m.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return m
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ensureRepo registers ALIAS=SOURCE unless ALIAS exists; the server's
// workers clone it in the background.
func ensureRepo(ctx context.Context, a *app.App, spec string, out io.Writer) error {
	alias, source, ok := strings.Cut(spec, "=")
	if !ok || alias == "" || source == "" {
		return fmt.Errorf("--repo %q: use ALIAS=SOURCE, e.g. --repo cidx=.", spec)
	}
	if _, err := a.Repos.Get(ctx, alias); err == nil {
		return nil
	}
	j, err := a.Repos.Add(ctx, "admin", alias, localSource(source), "")
	if err != nil {
		return fmt.Errorf("--repo %s: %w", spec, err)
	}
	fmt.Fprintf(out, "Registering %s-global from %s (job %s)\n", alias, source, j.ID)
	return nil
}

// localSource makes a local path absolute, so that it means the same thing
// to the server as to the person who typed it. URLs are left alone.
func localSource(src string) string {
	if strings.Contains(src, "://") || (strings.Contains(src, "@") && strings.Contains(src, ":")) {
		return src
	}
	if _, err := os.Stat(src); err == nil {
		if abs, err := filepath.Abs(src); err == nil {
			return abs
		}
	}
	return src
}

func printBanner(out io.Writer, a *app.App, base, token string, created bool) {
	url := base + "/mcp"
	exe, _ := os.Executable()
	fmt.Fprintf(out, "cidx %s serving MCP at %s\n", app.Version, url)
	fmt.Fprintf(out, "data directory: %s\n\n", a.DataDir)
	shown := token
	if created {
		fmt.Fprintf(out, "Admin token (shown once, store it now): %s\n\n", token)
	} else {
		shown = "<token>"
		fmt.Fprintf(out, "Create a token: %s token create admin --data-dir %s\n\n", exe, a.DataDir)
	}
	fmt.Fprintf(out, "Connect Claude Code:\n  claude mcp add --transport http cidx %s --header \"Authorization: Bearer %s\"\n\n", url, shown)
	fmt.Fprintf(out, "Claude Desktop / Cursor (stdio), in mcpServers:\n  \"cidx\": {\"command\": %q, \"args\": [\"serve\", \"--stdio\", \"--data-dir\", %q]}\n\n", exe, a.DataDir)
}
