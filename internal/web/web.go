// Package web serves cidx over HTTP: MCP at /mcp (Streamable HTTP, stateful
// sessions, and the stateless mode protocol 2026-07-28 requires), bearer
// authentication with RFC 9728 discovery, and /healthz.
package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	cauth "github.com/cidx/cidx/internal/auth"
)

// statelessVersion is the first MCP revision without sessions; requests
// that declare it (or later) go to the stateless handler.
const statelessVersion = "2026-07-28"

// Options configure the handler.
type Options struct {
	// Server is the MCP server shared by every session.
	Server *sdk.Server
	// Verify checks a bearer token.
	Verify func(ctx context.Context, token string) (cauth.Caller, error)
	// BaseURL is the public URL of this server (scheme://host[:port]); when
	// empty it is derived from each request's Host.
	BaseURL string
	// Anonymous lets requests without an Authorization header through; the
	// MCP server then runs them as its default user. Only for local testing.
	Anonymous bool
	Logger    *slog.Logger
}

// Handler returns the HTTP handler for every cidx endpoint.
func Handler(o Options) http.Handler {
	getServer := func(*http.Request) *sdk.Server { return o.Server }
	stateful := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{SessionTimeout: 30 * time.Minute, Logger: o.Logger})
	stateless := sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: o.Logger})
	mcpHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= statelessVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
	verifier := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		c, err := o.Verify(ctx, token)
		if err != nil {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: c.Name, Extra: map[string]any{"role": string(c.Role)}}, nil
	}

	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.Anonymous && r.Header.Get("Authorization") == "" {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		base := o.base(r)
		auth.RequireBearerToken(verifier, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL:    base + "/.well-known/oauth-protected-resource",
			AllowMissingExpiration: true, // cidx tokens live until revoked
		})(mcpHandler).ServeHTTP(w, r)
	}))
	prm := func(w http.ResponseWriter, r *http.Request) {
		base := o.base(r)
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               base + "/mcp",
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "cidx",
			ResourceDocumentation:  base + "/",
		}).ServeHTTP(w, r)
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource", prm)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", prm)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		base := o.base(r)
		w.Write([]byte("cidx MCP server\n\nMCP endpoint: " + base + "/mcp (Authorization: Bearer <token>)\n" +
			"Connect Claude Code: claude mcp add --transport http cidx " + base + "/mcp --header \"Authorization: Bearer <token>\"\n" +
			"Create a token: cidx token create <user>\n"))
	})
	return mux
}

func (o Options) base(r *http.Request) string {
	if o.BaseURL != "" {
		return strings.TrimRight(o.BaseURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
