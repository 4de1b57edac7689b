package tokvec

import (
	"os"
	"testing"

	"github.com/cidx/cidx/internal/codetok"
)

func TestScratchDebug(t *testing.T) {
	data, err := os.ReadFile(os.Getenv("MODEL"))
	if err != nil {
		t.Skip()
	}
	m, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	q := os.Getenv("Q")
	d := os.Getenv("D")
	qv := make([]float32, m.Dim)
	dv := make([]float32, m.Dim)
	m.Embed(qv, q, true)
	m.Embed(dv, d, false)
	t.Logf("cos %.4f", dot(qv, dv))
	for _, side := range []struct {
		text  string
		query bool
		other []float32
	}{{q, true, dv}, {d, false, qv}} {
		seen := map[string]bool{}
		for _, term := range codetok.Terms(side.text) {
			if seen[term] {
				continue
			}
			seen[term] = true
			id := m.ID(term)
			if id < 0 {
				t.Logf("  %-12s OOV", term)
				continue
			}
			w := m.DocWeight[id]
			if side.query {
				w = m.QueryWeight[id]
			}
			r := m.Row(id)
			t.Logf("  %-12s id %5d w %.2f |e| %.3f  e.other %.3f", term, id, w, sqrtf(dot(r, r)), dot(r, side.other))
		}
	}
}

func sqrtf(x float32) float32 {
	v := normalize([]float32{x})
	_ = v
	return x
}
