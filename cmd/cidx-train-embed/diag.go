package main

import (
	"log"
	"math"

	"github.com/cidx/cidx/internal/codetok"
	"github.com/cidx/cidx/internal/embed/evalset"
	"github.com/cidx/cidx/internal/embed/tokvec"
)

// sparseEval reports MRR@10 of exact sparse matching with the model's
// pooling weights (the lexical ceiling of the dense model).
func sparseEval(m *tokvec.Model, pairs []evalset.Pair, maxW float32) {
	bagOf := func(text string, query bool) map[string]float64 {
		cnt := map[string]float64{}
		for _, t := range codetok.Terms(text) {
			cnt[t]++
		}
		v := map[string]float64{}
		s := 0.0
		for t, c := range cnt {
			var w float32
			id := m.ID(t)
			if id >= 0 {
				if query {
					w = m.QueryWeight[id]
				} else {
					w = m.DocWeight[id]
				}
			} else {
				w = maxW
			}
			x := float64(w * tokvec.TF(float32(c), query))
			v[t] = x
			s += x * x
		}
		for t := range v {
			v[t] /= math.Sqrt(s)
		}
		return v
	}
	D := make([]map[string]float64, len(pairs))
	Q := make([]map[string]float64, len(pairs))
	for i, p := range pairs {
		D[i] = bagOf(p.Doc, false)
		Q[i] = bagOf(p.Query, true)
	}
	mrr := evalset.MRR(len(pairs), 10, func(i, j int) float64 {
		s := 0.0
		for t, x := range Q[i] {
			s += x * D[j][t]
		}
		return s
	})
	log.Printf("sparse matching with the model's weights (OOV weight %.2f): MRR@10 %.4f", maxW, mrr)
}

// showFailures logs queries that BM25 ranks first and the model does not.
func showFailures(m *tokvec.Model, pairs []evalset.Pair, D, Q [][]float32, B [][]float64, limit int) {
	shown := 0
	for i, p := range pairs {
		best, bestJ := -1.0, 0
		rank := 1
		own := dotF(Q[i], D[i])
		for j := range pairs {
			s := dotF(Q[i], D[j])
			if s > best {
				best, bestJ = s, j
			}
			if j != i && s >= own {
				rank++
			}
		}
		brank := 1
		for j := range pairs {
			if j != i && B[i][j] >= B[i][i] {
				brank++
			}
		}
		if brank == 1 && rank > 3 && shown < limit {
			shown++
			log.Printf("rank %d (own %.3f, top %.3f %s.%s): %s.%s %q", rank, own, best, pairs[bestJ].Path, pairs[bestJ].Name, pairs[i].Path, p.Name, p.Query)
		}
	}
}

func dotF(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return s
}
