package store

import (
	"sync"
	"time"
)

// Cache remembers the results of hot database reads for a short time, so
// that a burst of MCP calls does not repeat the same point queries. Writers
// in this process call Forget; other processes' writes (the CLI) are seen
// once the entry expires, after at most the TTL.
type Cache[K comparable, V any] struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[K]cacheEntry[V]
}

type cacheEntry[V any] struct {
	v       V
	expires time.Time
}

// NewCache returns a cache keeping at most max entries for ttl each.
func NewCache[K comparable, V any](ttl time.Duration, max int) *Cache[K, V] {
	return &Cache[K, V]{ttl: ttl, max: max, entries: map[K]cacheEntry[V]{}}
}

// Get returns the cached value for k, or calls load and caches its result
// when it succeeds.
func (c *Cache[K, V]) Get(k K, load func() (V, error)) (V, error) {
	now := time.Now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if len(c.entries) >= c.max {
		clear(c.entries) // crude, but bounded; the next reads refill it
	}
	c.entries[k] = cacheEntry[V]{v: v, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return v, nil
}

// Forget drops every entry, after a write that may change them.
func (c *Cache[K, V]) Forget() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
