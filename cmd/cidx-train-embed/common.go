package main

import (
	"math"

	"github.com/viterin/vek/vek32"
)

// commonComponents returns the top k principal directions (uncentred, as
// in SIF) of the pooled, normalised document vectors of up to 20000 code
// units, found by power iteration with deflation. Projecting them out of
// every embedding removes what all texts share.
func commonComponents(p *params, pairs []pair, k int, seed uint64) []float32 {
	if k <= 0 {
		return nil
	}
	dim := p.dim
	n := min(len(pairs), 20000)
	X := make([]float32, n*dim)
	for i := 0; i < n; i++ {
		row := X[i*dim : (i+1)*dim]
		p.pool(row, pairs[i*len(pairs)/n].c, p.logWDoc)
		norm(row)
	}
	r := &rng{s: seed ^ 0xc0}
	var comps []float32
	for c := 0; c < k; c++ {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.float() - 0.5)
		}
		for it := 0; it < 50; it++ {
			w := make([]float32, dim)
			for i := 0; i < n; i++ {
				row := X[i*dim : (i+1)*dim]
				axpy(w, row, vek32.Dot(row, v))
			}
			// Deflate earlier components.
			for q := 0; q < c; q++ {
				u := comps[q*dim : (q+1)*dim]
				axpy(w, u, -vek32.Dot(w, u))
			}
			nn := float32(math.Sqrt(float64(vek32.Dot(w, w))))
			if nn == 0 {
				break
			}
			vek32.MulNumber_Inplace(w, 1/nn)
			v = w
		}
		comps = append(comps, v...)
	}
	return comps
}
