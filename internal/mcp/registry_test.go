package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	cauth "github.com/cidx/cidx/internal/auth"
)

func TestCleanValidation(t *testing.T) {
	cases := map[string]string{
		`validating root: required: missing properties: ["a"]`:                                 `missing required arguments: ["a"]`,
		`validating root: validating /properties/b: maximum: 11/1 is greater than 10.000000`:   `argument "b": 11 is greater than 10`,
		`validating root: validating /properties/c: enum: z does not equal any of: [x y]`:      `argument "c": z does not equal any of: [x y]`,
		`validating root: validating /properties/a: type: 1 has type "integer", want "string"`: `argument "a": 1 has type "integer", want "string"`,
		`validating root: unexpected additional properties ["zz"]`:                             `unknown arguments ["zz"]`,
	}
	for in, want := range cases {
		if got := cleanValidation(in); got != want {
			t.Errorf("cleanValidation(%q) = %q, want %q", in, got, want)
		}
	}
}

// A tool that panics fails that call only, as a tool error; the session
// keeps working.
func TestPanickingToolIsAToolError(t *testing.T) {
	type in struct{}
	type out struct {
		OK bool `json:"ok"`
	}
	calls := 0
	r := NewRegistry()
	if err := r.Add(New("whoami", "help", "", ReadOnly(), func(ctx context.Context, c *cauth.Caller, _ in) (out, error) {
		calls++
		if calls == 1 {
			var m map[string]int
			m["boom"]++ // a nil map write: a bug
		}
		return out{OK: true}, nil
	})); err != nil {
		t.Fatal(err)
	}
	srv := r.Server(ServerOptions{Name: "test", Version: "0", Identify: func(context.Context, *auth.TokenInfo) (*cauth.Caller, error) {
		return &cauth.Caller{Name: "u", Role: cauth.Admin}, nil
	}})
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami"})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "internal error in whoami") {
		t.Fatalf("panicking call: %+v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "whoami"})
	if err != nil || res.IsError {
		t.Fatalf("the next call: %+v %v", res, err)
	}
}
