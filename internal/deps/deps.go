package deps

import (
	_ "github.com/sourcegraph/zoekt"
	_ "github.com/sourcegraph/zoekt/index"
	_ "github.com/sourcegraph/zoekt/query"
	_ "github.com/sourcegraph/zoekt/search"
	_ "github.com/tree-sitter/go-tree-sitter"
	_ "github.com/tree-sitter/tree-sitter-go/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-java/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-python/bindings/go"
	_ "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
	_ "github.com/viterin/vek/vek32"
)
