package topk

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeepsTheBestInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{0, 1, 5, 100, 2000} {
		var all []int
		h := New(k, func(a, b int) bool { return a < b })
		for range 1000 {
			x := r.IntN(500)
			all = append(all, x)
			h.Push(x)
		}
		slices.Sort(all)
		slices.Reverse(all)
		want := all[:min(k, len(all))]
		if got := h.Sorted(); !slices.Equal(got, want) {
			t.Fatalf("k=%d: got %v, want %v", k, got[:min(5, len(got))], want[:min(5, len(want))])
		}
	}
}
