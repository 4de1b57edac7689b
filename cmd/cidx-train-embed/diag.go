package main

import (
	"log"

	"github.com/cidx/cidx/internal/embed/evalset"
)

// showFailures logs queries that BM25 ranks first and the model does not.
func showFailures(pairs []evalset.Pair, D, Q [][]float32, B [][]float64, limit int) {
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
