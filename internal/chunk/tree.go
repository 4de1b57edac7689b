package chunk

import (
	"strings"

	ts "github.com/tree-sitter/go-tree-sitter"
)

// maxParseBytes is the largest file handed to a parser; larger files (and
// minified ones, see parseable) are cut into windows.
const maxParseBytes = 4 << 20

// parseable reports whether the file is worth parsing: not too large, and
// not minified or generated on a few enormous lines, where definitions
// could not become chunks of their own anyway.
func (s *splitter) parseable() bool {
	return len(s.src) <= maxParseBytes && len(s.src)/s.nLines() <= 1000
}

// walker reads definitions out of one syntax tree.
type walker struct {
	*splitter
	g   *grammar
	cur *ts.TreeCursor
}

// splitTree chunks s.src along its syntax tree; false means the parse
// failed and the caller falls back to windows.
func (s *splitter) splitTree(g *grammar) bool {
	tree := g.parse(s.src)
	if tree == nil {
		return false
	}
	defer tree.Close()
	root := tree.RootNode()
	if root == nil || root.IsError() && root.NamedChildCount() == 0 {
		return false
	}
	w := &walker{splitter: s, g: g, cur: root.Walk()}
	defer w.cur.Close()

	var items []item
	switch g.fam {
	case famGo:
		items = w.collect(root, "", w.goItem)
	case famPython:
		items = w.collect(root, "", w.pyItem)
	case famJS:
		items = w.collect(root, "", w.jsItem)
	case famJava:
		items = w.collect(root, "", w.javaItem)
	}
	s.region(0, s.nLines()-1, items, KindModule, "", "")
	return true
}

// children returns the named children of n.
func (w *walker) children(n *ts.Node) []ts.Node {
	c := w.cur
	c.Reset(*n)
	if !c.GotoFirstChild() {
		return nil
	}
	var out []ts.Node
	for {
		if nd := c.Node(); nd != nil && nd.IsNamed() {
			out = append(out, *nd)
		}
		if !c.GotoNextSibling() {
			return out
		}
	}
}

// namesOf returns n's children in the "name" field (Go's "a, b = 1, 2").
func (w *walker) namesOf(n *ts.Node) []ts.Node {
	c := w.cur
	c.Reset(*n)
	if !c.GotoFirstChild() {
		return nil
	}
	var out []ts.Node
	for {
		if c.FieldId() == w.g.fieldName {
			if nd := c.Node(); nd.IsNamed() { // not the commas between names
				out = append(out, *nd)
			}
		}
		if !c.GotoNextSibling() {
			return out
		}
	}
}

func (w *walker) text(n *ts.Node) string {
	return string(w.src[n.StartByte():n.EndByte()])
}

func qualify(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// symbol records the definition whose name token is n and returns its
// qualified name.
func (w *walker) symbol(n *ts.Node, parent, kind string) string {
	start, end := int(n.StartByte()), int(n.EndByte())
	name := qualify(parent, string(w.src[start:end]))
	w.syms = append(w.syms, Symbol{
		Name: name, Kind: kind, Parent: parent,
		Line:        w.lineOf(start) + 1,
		StartOffset: start, EndOffset: end,
	})
	return name
}

// def builds a definition item for node n whose name token is the field
// "name" of nameNode (n itself when nil); ok is false when there is no name.
func (w *walker) def(n, nameNode *ts.Node, parent, kind string) (item, bool) {
	if nameNode == nil {
		nameNode = n
	}
	nm := nameNode.ChildByFieldId(w.g.fieldName)
	if nm == nil {
		return item{}, false
	}
	return item{
		start: int(n.StartByte()), end: int(n.EndByte()),
		def: true, kind: kind, name: w.symbol(nm, parent, kind),
	}, true
}

func isComment(kind string) bool {
	switch kind {
	case "comment", "line_comment", "block_comment", "decorator":
		return true
	}
	return false
}

// collect turns the named children of container n into items, using
// classify for everything but comments, decorators and error nodes (whose
// children are collected in their place), and attaches comments to the
// definitions below them.
func (w *walker) collect(n *ts.Node, parent string, classify func(n *ts.Node, parent string) item) []item {
	var items []item
	var add func(n *ts.Node)
	add = func(n *ts.Node) {
		for _, c := range w.children(n) {
			k := c.Kind()
			switch {
			case isComment(k):
				items = append(items, item{start: int(c.StartByte()), end: int(c.EndByte()), attachable: true})
			case k == "ERROR" || k == "enum_body_declarations":
				add(&c)
			default:
				it := classify(&c, parent)
				it.start, it.end = int(c.StartByte()), int(c.EndByte())
				items = append(items, it)
			}
		}
	}
	add(n)
	w.attachComments(items)
	return items
}

// plain is a non-definition item.
var plain = item{}

// withMembers makes it a container whose members are the items of body.
func (w *walker) withMembers(it item, body *ts.Node, classify func(*ts.Node, string) item) item {
	if body == nil {
		return it
	}
	it.container = true
	it.members = w.collect(body, it.name, classify)
	return it
}

// ---- Go ----

func (w *walker) goItem(n *ts.Node, _ string) item {
	switch n.Kind() {
	case "function_declaration":
		if it, ok := w.def(n, nil, "", KindFunction); ok {
			return it
		}
	case "method_declaration":
		nm := n.ChildByFieldId(w.g.fieldName)
		if nm == nil {
			break
		}
		recv := ""
		if r := n.ChildByFieldName("receiver"); r != nil {
			recv = w.receiverType(r)
		}
		return item{def: true, kind: KindMethod, name: w.symbol(nm, recv, KindMethod)}
	case "type_declaration":
		return w.goTypeDecl(n)
	case "const_declaration", "var_declaration":
		kind := KindConst
		if n.Kind() == "var_declaration" {
			kind = KindVar
		}
		w.goSpecs(n, kind)
	}
	return plain
}

// receiverType returns the base type name of a method receiver: "Server"
// for "(s *Server)", "(s *Set[T])" or "(Server)".
func (w *walker) receiverType(r *ts.Node) string {
	for _, p := range w.children(r) {
		if p.Kind() != "parameter_declaration" {
			continue
		}
		t := p.ChildByFieldName("type")
		if t == nil {
			return ""
		}
		s := strings.TrimLeft(w.text(t), "*( \t")
		if i := strings.IndexAny(s, "[) \t"); i >= 0 {
			s = s[:i]
		}
		return s
	}
	return ""
}

// goSpecs records the names of a const or var declaration.
func (w *walker) goSpecs(n *ts.Node, kind string) {
	for _, c := range w.children(n) {
		switch c.Kind() {
		case "const_spec", "var_spec":
			for _, nm := range w.namesOf(&c) {
				if w.text(&nm) != "_" {
					w.symbol(&nm, "", kind)
				}
			}
		case "var_spec_list", "const_spec_list":
			w.goSpecs(&c, kind)
		}
	}
}

// goTypeDecl handles "type X ..." and "type ( ... )": one spec is a plain
// definition; a group is a container of its specs, split when too long.
func (w *walker) goTypeDecl(n *ts.Node) item {
	specs := w.collect(n, "", func(c *ts.Node, _ string) item {
		switch c.Kind() {
		case "type_spec", "type_alias":
			return w.goTypeSpec(c)
		}
		return plain
	})
	var first *item
	count := 0
	for i := range specs {
		if specs[i].def {
			count++
			if first == nil {
				first = &specs[i]
			}
		}
	}
	if first == nil {
		return plain
	}
	if count == 1 {
		return item{def: true, kind: first.kind, name: first.name}
	}
	return item{def: true, kind: KindType, name: first.name, container: true, members: specs, header: "type"}
}

// goTypeSpec records a type and its fields or interface methods.
func (w *walker) goTypeSpec(n *ts.Node) item {
	nm := n.ChildByFieldId(w.g.fieldName)
	if nm == nil {
		return plain
	}
	kind := KindType
	t := n.ChildByFieldName("type")
	if t != nil && t.Kind() == "interface_type" {
		kind = KindInterface
	}
	name := w.symbol(nm, "", kind)
	if t != nil {
		switch t.Kind() {
		case "struct_type":
			for _, l := range w.children(t) {
				if l.Kind() != "field_declaration_list" {
					continue
				}
				for _, f := range w.children(&l) {
					if f.Kind() == "field_declaration" {
						for _, fn := range w.namesOf(&f) {
							w.symbol(&fn, name, KindField)
						}
					}
				}
			}
		case "interface_type":
			for _, m := range w.children(t) {
				if m.Kind() == "method_elem" {
					if mn := m.ChildByFieldId(w.g.fieldName); mn != nil {
						w.symbol(mn, name, KindMethod)
					}
				}
			}
		}
	}
	return item{def: true, kind: kind, name: name}
}

// ---- Python ----

func (w *walker) pyItem(n *ts.Node, parent string) item {
	switch n.Kind() {
	case "function_definition":
		kind := KindFunction
		if parent != "" {
			kind = KindMethod
		}
		if it, ok := w.def(n, nil, parent, kind); ok {
			return it
		}
	case "class_definition":
		if it, ok := w.def(n, nil, parent, KindClass); ok {
			return w.withMembers(it, n.ChildByFieldName("body"), w.pyItem)
		}
	case "decorated_definition":
		if d := n.ChildByFieldName("definition"); d != nil {
			return w.pyItem(d, parent)
		}
	case "expression_statement":
		// NAME = value: a module variable or a class attribute.
		if a := n.NamedChild(0); a != nil && a.Kind() == "assignment" {
			if l := a.ChildByFieldName("left"); l != nil && l.Kind() == "identifier" {
				kind := KindVar
				if parent != "" {
					kind = KindField
				}
				w.symbol(l, parent, kind)
			}
		}
	}
	return plain
}

// ---- JavaScript, TypeScript ----

func isFuncValue(kind string) bool {
	switch kind {
	case "arrow_function", "function_expression", "function", "generator_function":
		return true
	}
	return false
}

func (w *walker) jsItem(n *ts.Node, parent string) item {
	switch n.Kind() {
	case "function_declaration", "generator_function_declaration", "function_signature":
		if it, ok := w.def(n, nil, parent, KindFunction); ok {
			return it
		}
	case "class_declaration", "abstract_class_declaration", "class":
		if it, ok := w.def(n, nil, parent, KindClass); ok {
			return w.withMembers(it, n.ChildByFieldName("body"), w.jsMember)
		}
	case "interface_declaration":
		if it, ok := w.def(n, nil, parent, KindInterface); ok {
			return it
		}
	case "type_alias_declaration", "enum_declaration":
		if it, ok := w.def(n, nil, parent, KindType); ok {
			return it
		}
	case "export_statement":
		if d := n.ChildByFieldName("declaration"); d != nil {
			return w.jsItem(d, parent)
		}
		if v := n.ChildByFieldName("value"); v != nil && (isFuncValue(v.Kind()) || v.Kind() == "class") {
			if v.ChildByFieldId(w.g.fieldName) != nil {
				return w.jsItem(v, parent)
			}
			kind := KindFunction
			if v.Kind() == "class" {
				kind = KindClass
			}
			return item{def: true, kind: kind, name: "default"}
		}
	case "ambient_declaration":
		for _, c := range w.children(n) {
			if it := w.jsItem(&c, parent); it.def {
				return it
			}
		}
	case "lexical_declaration", "variable_declaration":
		return w.jsVars(n)
	case "expression_statement":
		// X.prototype.m = function () {}, module.exports.f = () => {}
		if a := n.NamedChild(0); a != nil && a.Kind() == "assignment_expression" {
			l, r := a.ChildByFieldName("left"), a.ChildByFieldName("right")
			if l != nil && r != nil && l.Kind() == "member_expression" && isFuncValue(r.Kind()) {
				if p := l.ChildByFieldName("property"); p != nil {
					obj := ""
					if o := l.ChildByFieldName("object"); o != nil {
						obj = strings.TrimSuffix(w.text(o), ".prototype")
					}
					if len(obj) > 80 || strings.ContainsAny(obj, "([{ \n") {
						obj = ""
					}
					return item{def: true, kind: KindFunction, name: w.symbol(p, obj, KindFunction)}
				}
			}
		}
	}
	return plain
}

// jsVars handles const/let/var: "const f = () => ..." is a function
// definition; other simple names are recorded as const or var symbols.
func (w *walker) jsVars(n *ts.Node) item {
	kind := KindVar
	if k := n.ChildByFieldName("kind"); k != nil && w.text(k) == "const" {
		kind = KindConst
	}
	res := plain
	for _, d := range w.children(n) {
		if d.Kind() != "variable_declarator" {
			continue
		}
		nm := d.ChildByFieldId(w.g.fieldName)
		if nm == nil || nm.Kind() != "identifier" {
			continue
		}
		v := d.ChildByFieldName("value")
		switch {
		case v != nil && isFuncValue(v.Kind()) && !res.def:
			res = item{def: true, kind: KindFunction, name: w.symbol(nm, "", KindFunction)}
		case v != nil && v.Kind() == "class" && !res.def:
			res = item{def: true, kind: KindClass, name: w.symbol(nm, "", KindClass)}
			res = w.withMembers(res, v.ChildByFieldName("body"), w.jsMember)
		default:
			w.symbol(nm, "", kind)
		}
	}
	return res
}

// jsMember classifies a class body member.
func (w *walker) jsMember(n *ts.Node, parent string) item {
	switch n.Kind() {
	case "method_definition", "method_signature", "abstract_method_signature":
		if it, ok := w.def(n, nil, parent, KindMethod); ok {
			return it
		}
	case "field_definition", "public_field_definition":
		nm := n.ChildByFieldName("property") // JavaScript
		if nm == nil {
			nm = n.ChildByFieldId(w.g.fieldName) // TypeScript
		}
		if nm == nil {
			break
		}
		if v := n.ChildByFieldName("value"); v != nil && isFuncValue(v.Kind()) {
			return item{def: true, kind: KindMethod, name: w.symbol(nm, parent, KindMethod)}
		}
		w.symbol(nm, parent, KindField)
	}
	return plain
}

// ---- Java ----

func (w *walker) javaItem(n *ts.Node, parent string) item {
	kind := ""
	switch n.Kind() {
	case "class_declaration", "record_declaration":
		kind = KindClass
	case "interface_declaration", "annotation_type_declaration":
		kind = KindInterface
	case "enum_declaration":
		kind = KindType
	case "method_declaration", "constructor_declaration", "compact_constructor_declaration",
		"annotation_type_element_declaration":
		if it, ok := w.def(n, nil, parent, KindMethod); ok {
			return it
		}
		return plain
	case "field_declaration", "constant_declaration":
		for _, d := range w.children(n) {
			if d.Kind() == "variable_declarator" {
				if nm := d.ChildByFieldId(w.g.fieldName); nm != nil {
					w.symbol(nm, parent, KindField)
				}
			}
		}
		return plain
	case "enum_constant":
		if nm := n.ChildByFieldId(w.g.fieldName); nm != nil {
			w.symbol(nm, parent, KindConst)
		}
		return plain
	default:
		return plain
	}
	it, ok := w.def(n, nil, parent, kind)
	if !ok {
		return plain
	}
	return w.withMembers(it, n.ChildByFieldName("body"), w.javaItem)
}
