// Package topk keeps the k best items of a stream: the selection step of
// every ranked search (BM25, vectors), done with a bounded min-heap so that
// a scan over N candidates costs O(N log k) and k items of memory.
package topk

import "container/heap"

// Heap holds the best k items pushed so far. worse(a, b) reports whether a
// ranks below b; it must be a strict order (break ties) for results to be
// deterministic.
type Heap[T any] struct {
	h minHeap[T]
	k int
}

// New returns an empty Heap keeping k items.
func New[T any](k int, worse func(a, b T) bool) *Heap[T] {
	return &Heap[T]{h: minHeap[T]{items: make([]T, 0, k+1), worse: worse}, k: k}
}

// Push offers x.
func (t *Heap[T]) Push(x T) {
	if t.k <= 0 {
		return
	}
	if len(t.h.items) < t.k {
		heap.Push(&t.h, x)
	} else if t.h.worse(t.h.items[0], x) {
		t.h.items[0] = x
		heap.Fix(&t.h, 0)
	}
}

// Sorted empties the heap and returns its items, best first.
func (t *Heap[T]) Sorted() []T {
	out := make([]T, len(t.h.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(T)
	}
	return out
}

type minHeap[T any] struct {
	items []T
	worse func(a, b T) bool
}

func (h minHeap[T]) Len() int           { return len(h.items) }
func (h minHeap[T]) Less(i, j int) bool { return h.worse(h.items[i], h.items[j]) }
func (h minHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *minHeap[T]) Push(x any)        { h.items = append(h.items, x.(T)) }
func (h *minHeap[T]) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
