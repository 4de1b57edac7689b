package main

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log"
	"math"
	"os"
	"time"

	"github.com/viterin/vek/vek32"
)

// sgnsConfig configures skip-gram training.
type sgnsConfig struct {
	Epochs    int     // passes over the corpus
	Contexts  int     // contexts sampled per centre term from its unit
	Negatives int     // negative samples per (centre, context) pair
	LR        float64 // initial learning rate, decayed linearly to LR/1e4
	Subsample float64 // frequent-term subsampling threshold (word2vec's t)
	MaxSpan   int     // units longer than this are split into spans
}

// rng is a small deterministic generator (splitmix64), independent of the
// Go version's math/rand.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func (r *rng) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// sgns trains word vectors with skip-gram and negative sampling where the
// context window is the code unit: for each term, Contexts other terms of
// the same unit (doc comment and code alike) are drawn uniformly. It
// returns the input vectors plus the output vectors (W + C), which work
// better for similarity than W alone.
func sgns(c *corpus, dim int, cfg sgnsConfig, seed uint64) []float32 {
	V := len(c.vocab)
	r := &rng{s: seed}
	W := make([]float32, V*dim)
	C := make([]float32, V*dim)
	for i := range W {
		W[i] = float32((r.float() - 0.5) / float64(dim))
	}
	// Unigram^0.75 table for negatives.
	const tableSize = 1 << 24
	table := make([]int32, tableSize)
	{
		total := 0.0
		for _, n := range c.counts {
			total += math.Pow(float64(n), 0.75)
		}
		i := 0
		cum := math.Pow(float64(c.counts[0]), 0.75) / total
		for k := range table {
			table[k] = int32(i)
			if float64(k)/tableSize > cum && i < V-1 {
				i++
				cum += math.Pow(float64(c.counts[i]), 0.75) / total
			}
		}
	}
	// Keep probabilities for subsampling.
	var totalCount int64
	for _, n := range c.counts {
		totalCount += n
	}
	keep := make([]float64, V)
	for i, n := range c.counts {
		f := float64(n) / float64(totalCount)
		t := cfg.Subsample
		keep[i] = math.Min(1, (math.Sqrt(f/t)+1)*t/f)
	}
	// Deterministic unit order.
	order := make([]int, len(c.units))
	for i := range order {
		order[i] = i
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	totalWork := float64(cfg.Epochs) * float64(len(c.toks))
	done := 0.0
	grad := make([]float32, dim)
	tmp := make([]float32, dim)
	span := make([]int32, 0, 1024)
	start := time.Now()
	var pairs int64
	lr0 := float32(cfg.LR)
	for ep := 0; ep < cfg.Epochs; ep++ {
		var loss float64
		var lossN int64
		for _, ui := range order {
			u := c.units[ui]
			toks := c.toks[u.docStart:u.end]
			done += float64(len(toks))
			lr := lr0 * float32(math.Max(1e-4, 1-done/totalWork))
			span = span[:0]
			for _, t := range toks {
				if keep[t] >= 1 || r.float() < keep[t] {
					span = append(span, t)
				}
			}
			for s0 := 0; s0 < len(span); s0 += cfg.MaxSpan {
				s := span[s0:min(len(span), s0+cfg.MaxSpan)]
				if len(s) < 2 {
					continue
				}
				for i, w := range s {
					wv := W[int(w)*dim : int(w+1)*dim]
					for k := 0; k < cfg.Contexts; k++ {
						j := r.intn(len(s) - 1)
						if j >= i {
							j++
						}
						ctx := s[j]
						if ctx == w {
							continue
						}
						clear(grad)
						for n := 0; n <= cfg.Negatives; n++ {
							target, label := ctx, float32(1)
							if n > 0 {
								target = table[r.intn(tableSize)]
								if target == ctx {
									continue
								}
								label = 0
							}
							cv := C[int(target)*dim : int(target+1)*dim]
							f := vek32.Dot(wv, cv)
							sig := sigmoid(f)
							if lossN < 1<<40 {
								if label == 1 {
									loss -= math.Log(float64(sig) + 1e-7)
								} else {
									loss -= math.Log(float64(1-sig) + 1e-7)
								}
								lossN++
							}
							g := (label - sig) * lr
							// grad += g * cv ; cv += g * wv
							vek32.MulNumber_Into(tmp, cv, g)
							vek32.Add_Inplace(grad, tmp)
							vek32.MulNumber_Into(tmp, wv, g)
							vek32.Add_Inplace(cv, tmp)
						}
						vek32.Add_Inplace(wv, grad)
						pairs++
					}
				}
			}
		}
		log.Printf("skip-gram epoch %d: %d pairs, loss %.4f, %.0fs", ep+1, pairs, loss/float64(max(1, lossN)), time.Since(start).Seconds())
	}
	vek32.Add_Inplace(W, C)
	return W
}

func sigmoid(x float32) float32 {
	if x > 8 {
		return 1
	}
	if x < -8 {
		return 0
	}
	return float32(1 / (1 + math.Exp(-float64(x))))
}

// loadOrTrainSGNS trains skip-gram vectors, or loads them from cache (a
// development shortcut; the file name gets a hash of the vocabulary, counts
// and settings).
func loadOrTrainSGNS(c *corpus, dim int, cfg sgnsConfig, seed uint64, cache string) []float32 {
	if cache != "" {
		// Key the cache by vocabulary, dimension and settings.
		h := fnv.New64a()
		fmt.Fprintf(h, "%d %+v %d\n", dim, cfg, seed)
		for _, t := range c.vocab {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		for _, n := range c.counts {
			fmt.Fprintf(h, "%d ", n)
		}
		cache = fmt.Sprintf("%s.%016x", cache, h.Sum64())
		if data, err := os.ReadFile(cache); err == nil && len(data) == 4*len(c.vocab)*dim {
			S := make([]float32, len(c.vocab)*dim)
			_, err := binary.Decode(data, binary.LittleEndian, S)
			if err == nil {
				log.Printf("skip-gram vectors loaded from %s", cache)
				return S
			}
		}
	}
	S := sgns(c, dim, cfg, seed)
	if cache != "" {
		data, _ := binary.Append(nil, binary.LittleEndian, S)
		_ = os.WriteFile(cache, data, 0o644)
	}
	return S
}
