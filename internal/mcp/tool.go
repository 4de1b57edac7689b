// Package mcp is cidx's MCP adapter: the tool registry, the per-caller tool
// list, permission checks before every call, the mapping of errors to tool
// results, the tool documents, and the server value shared by the stdio and
// HTTP transports. Tool behaviour itself lives in internal/mcp/tools, which
// calls the domain services.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cidx/cidx/internal/auth"
)

// Tool is one MCP tool: its name, category, required permission,
// annotations, document and typed handler, as a value.
type Tool struct {
	Name        string
	Category    string
	Permission  auth.Permission
	Annotations sdk.ToolAnnotations

	inSchema   *jsonschema.Schema
	outSchema  *jsonschema.Schema
	inResolved *jsonschema.Resolved
	outType    reflect.Type
	call       func(ctx context.Context, c *auth.Caller, args map[string]any) (any, error)

	// doc is the full markdown document, summary its TL;DR.
	doc     string
	summary string
}

// Handler is a typed tool handler.
type Handler[In, Out any] func(ctx context.Context, c *auth.Caller, in In) (Out, error)

// ReadOnly annotates a tool that changes nothing.
func ReadOnly() sdk.ToolAnnotations {
	f := false
	return sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}
}

// Mutating annotates a tool that changes state.
func Mutating(destructive, idempotent, openWorld bool) sdk.ToolAnnotations {
	return sdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: &openWorld}
}

// New makes a Tool from a typed handler. The input schema is inferred from
// In (json and jsonschema tags); the output schema from Out, relaxed so that
// only "success" is required, which lets the error payload
// {success:false, error, hint} validate against it too.
func New[In, Out any](name, category string, perm auth.Permission, ann sdk.ToolAnnotations, h Handler[In, Out]) *Tool {
	in, err := jsonschema.For[In](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", name, err))
	}
	out, err := jsonschema.For[Out](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", name, err))
	}
	if out.Properties == nil {
		out.Properties = map[string]*jsonschema.Schema{}
	}
	shallow(out)
	out.Required = []string{"success"}
	// No descriptions: these two repeat in every tool, and the server's
	// instructions explain the error payload once.
	out.Properties["error"] = &jsonschema.Schema{Type: "string"}
	out.Properties["hint"] = &jsonschema.Schema{Type: "string"}
	out.AdditionalProperties = nil
	t := &Tool{
		Name: name, Category: category, Permission: perm, Annotations: ann,
		inSchema: in, outSchema: out, outType: reflect.TypeFor[Out](),
	}
	t.call = func(ctx context.Context, c *auth.Caller, args map[string]any) (any, error) {
		var v In
		b, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, &ArgError{Msg: fmt.Sprintf("invalid arguments: %v", err)}
		}
		return h(ctx, c, v)
	}
	return t
}

// shallow keeps an output schema's top-level properties with their types
// and descriptions, and drops what nested objects and arrays contain: the
// output schema is paid for in every conversation's tools/list, while the
// full shapes are in each tool's document (cidx_quick_reference) and in the
// results themselves.
func shallow(s *jsonschema.Schema) {
	for _, p := range s.Properties {
		p.Properties, p.Items, p.AdditionalProperties, p.Required, p.PropertyNames = nil, nil, nil, nil, nil
	}
}

// Input lets a tool adjust its inferred input schema (ranges, enums,
// defaults, unions) before it is published.
func (t *Tool) Input(f func(s *jsonschema.Schema)) *Tool {
	f(t.inSchema)
	return t
}

// Prop returns the input schema of property name, for use inside Input.
func Prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p := s.Properties[name]
	if p == nil {
		panic("no input property " + name)
	}
	return p
}

// Range sets minimum and maximum of an integer property and its default.
func Range(p *jsonschema.Schema, lo, hi float64, def any) {
	p.Minimum = &lo
	if hi > 0 {
		p.Maximum = &hi
	}
	if def != nil {
		b, _ := json.Marshal(def)
		p.Default = b
	}
}

// Enum restricts a string property to values, with a default.
func Enum(p *jsonschema.Schema, def string, values ...string) {
	p.Enum = nil
	for _, v := range values {
		p.Enum = append(p.Enum, v)
	}
	if def != "" {
		b, _ := json.Marshal(def)
		p.Default = b
	}
}

// StringOrList makes a property accept a string or an array of strings.
func StringOrList(p *jsonschema.Schema) {
	p.Type = ""
	p.Types = []string{"string", "array"}
	p.Items = &jsonschema.Schema{Type: "string"}
}

// ArgError is an invalid argument.
type ArgError struct{ Msg, Hint string }

func (e *ArgError) Error() string    { return e.Msg }
func (e *ArgError) UserHint() string { return e.Hint }

// Doc is the tool's full markdown document.
func (t *Tool) Doc() string { return t.doc }

// Summary is the tool's one-line TL;DR.
func (t *Tool) Summary() string { return t.summary }

// Info describes a tool for the help tools.
type Info struct {
	Name       string
	Category   string
	Permission auth.Permission
	Summary    string
	Doc        string
}

func (t *Tool) info() Info {
	return Info{Name: t.Name, Category: t.Category, Permission: t.Permission, Summary: t.summary, Doc: t.doc}
}

// hinter and detailer are implemented by domain errors that carry advice
// or extra fields (suggested aliases) for the caller.
type hinter interface{ UserHint() string }
type detailer interface{ UserDetails() map[string]any }
type messager interface{ UserMessage() string }

// errorPayload turns an error into the tool error payload.
func errorPayload(err error) map[string]any {
	p := map[string]any{"success": false, "error": err.Error()}
	if m, ok := err.(messager); ok {
		p["error"] = m.UserMessage() // the hint goes in its own field
	}
	var h hinter
	if errors.As(err, &h) && h.UserHint() != "" {
		p["hint"] = h.UserHint()
	}
	var d detailer
	if errors.As(err, &d) {
		for k, v := range d.UserDetails() {
			if _, taken := p[k]; !taken {
				p[k] = v
			}
		}
	}
	return p
}

// firstSentence returns the text after "TL;DR:" up to the end of its line.
func tldr(doc string) string {
	for _, line := range strings.Split(doc, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "TL;DR:"); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
