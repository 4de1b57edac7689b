package mcp

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	cauth "github.com/cidx/cidx/internal/auth"
)

//go:embed docs/*.md
var docFS embed.FS

// Registry holds every tool in a fixed order and builds MCP servers that
// expose them.
type Registry struct {
	tools  []*Tool
	byName map[string]*Tool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]*Tool{}} }

// Add registers tools. Each must have a document docs/NAME.md with a TL;DR.
func (r *Registry) Add(tools ...*Tool) error {
	for _, t := range tools {
		if _, dup := r.byName[t.Name]; dup {
			return fmt.Errorf("tool %s registered twice", t.Name)
		}
		b, err := docFS.ReadFile("docs/" + t.Name + ".md")
		if err != nil {
			return fmt.Errorf("tool %s has no document docs/%s.md", t.Name, t.Name)
		}
		t.doc = string(b)
		t.summary = tldr(t.doc)
		if t.summary == "" {
			return fmt.Errorf("tool %s: document has no TL;DR line", t.Name)
		}
		res, err := t.inSchema.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
		if err != nil {
			return fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		t.inResolved = res
		r.tools = append(r.tools, t)
		r.byName[t.Name] = t
	}
	return nil
}

// Tools returns every tool's description in registry order.
func (r *Registry) Tools() []Info {
	out := make([]Info, len(r.tools))
	for i, t := range r.tools {
		out[i] = t.info()
	}
	return out
}

// Tool returns the named tool.
func (r *Registry) Tool(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Visible lists the tools role may call, in registry order.
func (r *Registry) Visible(role cauth.Role) []Info {
	var out []Info
	for _, t := range r.tools {
		if role.Has(t.Permission) {
			out = append(out, t.info())
		}
	}
	return out
}

// ServerOptions configure Server.
type ServerOptions struct {
	Name, Version string
	// Identify returns the caller for a request. HTTP requests carry the
	// verified token's user in TokenInfo; stdio has none, and Identify
	// supplies the user the process was started for.
	Identify func(ctx context.Context, ti *auth.TokenInfo) (*cauth.Caller, error)
	Logger   *slog.Logger
	// Instructions are sent to clients at initialization.
	Instructions string
}

// Server builds one MCP server with every tool. tools/list is filtered per
// caller by a middleware; every call checks the permission again.
func (r *Registry) Server(o ServerOptions) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: o.Name, Title: "cidx code intelligence", Version: o.Version}, &sdk.ServerOptions{
		Instructions: o.Instructions,
		Logger:       quiet(o.Logger),
		// Prompts are declared (the list is empty) because the SDK answers
		// prompts/list either way, and 2026-07-28 wants answered methods declared.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{}, Prompts: &sdk.PromptCapabilities{}},
	})
	for _, t := range r.tools {
		s.AddTool(t.sdkTool(), r.handler(t, o))
	}
	for _, t := range r.tools {
		uri := "cidx://docs/tools/" + t.Name
		doc := t.doc
		s.AddResource(&sdk.Resource{URI: uri, Name: t.Name, Title: t.Name + " documentation", MIMEType: "text/markdown", Description: t.summary},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: doc}}}, nil
			})
	}
	s.AddReceivingMiddleware(r.filterList(o))
	return s
}

// quiet passes on only the SDK's warnings and errors: its per-session
// info lines would drown the server's own log.
func quiet(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(levelFilter{l.Handler(), slog.LevelWarn})
}

type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (f levelFilter) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.Handler.Enabled(ctx, l)
}

func (f levelFilter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelFilter{f.Handler.WithAttrs(a), f.min}
}

func (f levelFilter) WithGroup(n string) slog.Handler {
	return levelFilter{f.Handler.WithGroup(n), f.min}
}

// sdkTool is the tools/list entry. Its description is the document's
// TL;DR alone (the server's instructions say where full documents are):
// tools/list is paid for in every conversation, so it is kept small.
func (t *Tool) sdkTool() *sdk.Tool {
	ann := t.Annotations
	desc := t.summary
	// Schemas go to the SDK as bytes: it re-reads the input schema on every
	// stateless call (looking for header annotations), and decoding bytes
	// is far cheaper than re-encoding a *jsonschema.Schema each time.
	in, err := json.Marshal(t.inSchema)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
	}
	out, err := json.Marshal(t.outSchema)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.Name, err))
	}
	return &sdk.Tool{Name: t.Name, Description: desc, InputSchema: json.RawMessage(in), OutputSchema: json.RawMessage(out), Annotations: &ann}
}

func (r *Registry) filterList(o ServerOptions) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method != "tools/list" || err != nil {
				return res, err
			}
			lt, ok := res.(*sdk.ListToolsResult)
			if !ok {
				return res, err
			}
			caller, cerr := o.Identify(ctx, tokenInfo(req.GetExtra()))
			if cerr != nil {
				lt.Tools = nil
				return lt, nil
			}
			lt.Tools = slices.DeleteFunc(slices.Clone(lt.Tools), func(t *sdk.Tool) bool {
				rt := r.byName[t.Name]
				return rt == nil || !caller.Role.Has(rt.Permission)
			})
			return lt, nil
		}
	}
}

// handler runs one call: identify, check permission, validate arguments,
// run, and shape the result. User mistakes become tool errors
// (isError:true with {success:false, error, hint}), never protocol errors.
func (r *Registry) handler(t *Tool, o ServerOptions) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		start := time.Now()
		caller, err := o.Identify(ctx, tokenInfo(req.Extra))
		if err != nil {
			return errorResult(err), nil
		}
		if err := caller.Check(t.Permission, "tool "+t.Name); err != nil {
			return errorResult(&ArgError{Msg: err.Error(), Hint: "ask an administrator for a role that has it; whoami shows your role and permissions"}), nil
		}
		args := map[string]any{}
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return errorResult(&ArgError{Msg: "arguments must be a JSON object: " + err.Error()}), nil
			}
		}
		if err := t.inResolved.ApplyDefaults(&args); err != nil {
			return errorResult(&ArgError{Msg: "invalid arguments: " + err.Error()}), nil
		}
		if err := t.inResolved.Validate(args); err != nil {
			return errorResult(&ArgError{Msg: "invalid arguments: " + cleanValidation(err.Error()), Hint: "see the input schema, or cidx_quick_reference(tool=\"" + t.Name + "\") for the full document"}), nil
		}
		out, err := safeCall(ctx, t, caller, args, o.Logger)
		if o.Logger != nil {
			o.Logger.Debug("tool call", "tool", t.Name, "user", caller.Name, "ms", time.Since(start).Milliseconds(), "ok", err == nil)
		}
		if err != nil {
			return errorResult(err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encode %s result: %w", t.Name, err)
		}
		// StructuredContent is the value, not the bytes: encoding/json
		// re-validates (compacts) raw JSON byte by byte, which costs more
		// than encoding the value again.
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
			StructuredContent: out,
		}, nil
	}
}

// safeCall runs the tool, turning a panic (a bug) into a tool error for
// this call only: one faulty request must not take the server, or the
// stdio session, down for everyone. The stack goes to the log.
func safeCall(ctx context.Context, t *Tool, caller *cauth.Caller, args map[string]any, log *slog.Logger) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			if log != nil {
				log.Error("tool panicked", "tool", t.Name, "user", caller.Name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			out, err = nil, &ArgError{Msg: "internal error in " + t.Name + " (a bug; the server log has the details)", Hint: "try again; if it persists, report it to the administrator"}
		}
	}()
	return t.call(ctx, caller, args)
}

// tokenInfo is the verified bearer token of an HTTP request; nil on stdio.
func tokenInfo(extra *sdk.RequestExtra) *auth.TokenInfo {
	if extra == nil {
		return nil
	}
	return extra.TokenInfo
}

func errorResult(err error) *sdk.CallToolResult {
	p := errorPayload(err)
	b, _ := json.Marshal(p)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

var (
	propRE     = regexp.MustCompile(`validating /properties/([^:]+): \w+: `)
	rationalRE = regexp.MustCompile(`\b(-?\d+)/1\b`)
	floatRE    = regexp.MustCompile(`\b(-?\d+)\.000000\b`)
)

// cleanValidation rewrites the schema validator's message, which speaks of
// schema locations, in terms of the tool's arguments:
// `validating root: validating /properties/limit: maximum: 501/1 is greater than 500.000000`
// becomes `argument "limit": 501 is greater than 500`.
func cleanValidation(msg string) string {
	msg = strings.ReplaceAll(msg, "validating root: ", "")
	msg = propRE.ReplaceAllString(msg, `argument "$1": `)
	msg = strings.Replace(msg, "required: missing properties:", "missing required arguments:", 1)
	msg = strings.Replace(msg, "unexpected additional properties", "unknown arguments", 1)
	msg = rationalRE.ReplaceAllString(msg, "$1")
	return floatRE.ReplaceAllString(msg, "$1")
}
