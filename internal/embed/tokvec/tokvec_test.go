package tokvec

import (
	"bytes"
	"math"
	"testing"
)

func testModel() *Model {
	vocab := []string{"read", "file", "http", "server", "error"}
	dim := 8
	m := &Model{Name: "t", Dim: dim, Vocab: vocab, OOVHashes: 4, OOVWeight: 2, OOVQuery: 3, HeadWeight: 4}
	for i := range vocab {
		m.DocWeight = append(m.DocWeight, float32(i+1))
		m.QueryWeight = append(m.QueryWeight, float32(2*i+1))
		for j := 0; j < dim; j++ {
			m.Vec = append(m.Vec, float32(math.Sin(float64(i*dim+j))))
		}
	}
	m.Common = make([]float32, dim)
	m.Common[0] = 1
	m.Init()
	return m
}

func cos(a, b []float32) float64 {
	return float64(dot(a, b))
}

func TestRoundTrip(t *testing.T) {
	m := testModel()
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	m2, err := Read(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if m2.Name != "t" || m2.Dim != 8 || len(m2.Vocab) != 5 || m2.OOVHashes != 4 || m2.OOVWeight != 2 || m2.OOVQuery != 3 || m2.HeadWeight != 4 || len(m2.Common) != 8 {
		t.Fatalf("header mismatch: %+v", m2)
	}
	for i, x := range m.Vec {
		if math.Abs(float64(x-m2.Vec[i])) > 1.0/127+1e-6 {
			t.Fatalf("vector %d: %v vs %v", i, x, m2.Vec[i])
		}
	}
	// Corruption is detected.
	data := buf.Bytes()
	data[len(data)/2] ^= 1
	if _, err := Read(data); err == nil {
		t.Fatal("corrupt model accepted")
	}
	if _, err := Read([]byte("nope")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestEmbed(t *testing.T) {
	m := testModel()
	v := make([]float32, m.Dim)
	if m.Embed(v, "the of", false) {
		t.Fatal("stopwords only: want no terms")
	}
	for _, x := range v {
		if x != 0 {
			t.Fatal("want zero vector")
		}
	}
	if !m.Embed(v, "func ReadFile() error", false) {
		t.Fatal("no terms")
	}
	if n := dot(v, v); math.Abs(float64(n)-1) > 1e-5 {
		t.Fatalf("|v|^2 = %v", n)
	}
	if math.Abs(float64(v[0])) > 1e-6 {
		t.Fatalf("common component not removed: %v", v[0])
	}
	w := make([]float32, m.Dim)
	m.Embed(w, "func ReadFile() error", false)
	for i := range v {
		if v[i] != w[i] {
			t.Fatal("not deterministic")
		}
	}
	// An out-of-vocabulary identifier matches itself.
	a, b, c := make([]float32, m.Dim), make([]float32, m.Dim), make([]float32, m.Dim)
	m.Embed(a, "zork", true)
	m.Embed(b, "zork quux", false)
	m.Embed(c, "quux blorp", false)
	if !(cos(a, b) > cos(a, c)+0.2) {
		t.Fatalf("OOV exact match: %v vs %v", cos(a, b), cos(a, c))
	}
	// The head line of a document weighs more.
	h1, h2, q := make([]float32, m.Dim), make([]float32, m.Dim), make([]float32, m.Dim)
	m.Embed(q, "http server", true)
	m.Embed(h1, "http server\nread file", false)
	m.Embed(h2, "read file\nhttp server", false)
	if !(cos(q, h1) > cos(q, h2)) {
		t.Fatalf("head weight: %v <= %v", cos(q, h1), cos(q, h2))
	}
}

func TestSplitHead(t *testing.T) {
	for _, c := range []struct{ in, head string }{
		{"\n\nfunc F() {\n\treturn\n}", "\n\nfunc F() {"},
		{"    def f(self):\n        return 1\n\n    def g(self):\n        pass", "    def f(self):"},
		{"// F does x.\nfunc F() {}", "// F does x."},
		{"\t\tx := 1\n\t\treturn x\n\t}\n}\n", ""},
		{"single line", "single line"},
		{"", ""},
	} {
		h, r := SplitHead(c.in)
		if h != c.head || h+r != c.in {
			t.Errorf("SplitHead(%q) = %q, %q; want head %q", c.in, h, r, c.head)
		}
	}
}
