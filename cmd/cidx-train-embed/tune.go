package main

import (
	"log"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/cidx/cidx/internal/embed/tokvec"
	"github.com/viterin/vek/vek32"
)

// tuneConfig configures contrastive tuning.
type tuneConfig struct {
	Epochs   int     // passes over the training pairs
	Batch    int     // pairs per batch (the other pairs are the negatives)
	MaxCode  int     // code terms per unit (the rest is cut)
	LR       float64 // Adagrad learning rate of the vectors
	WeightLR float64 // Adagrad learning rate of the log pooling weights
	Scale    float64 // softmax scale (inverse temperature)
	Head     float64 // head-line weight of documents (tokvec.Model.HeadWeight)
	Local    int     // if > 0, batches are made of runs of this many pairs from the same files (harder negatives)
}

// bag is a text as distinct term ids with their pooling factors.
type bag struct {
	ids []int32
	tf  []float32
}

// makeBag pools ids; the first nHead of them count headWeight times.
func makeBag(ids []int32, query bool, nHead int, headWeight float32) bag {
	m := map[int32]float32{}
	var order []int32
	for k, id := range ids {
		if _, ok := m[id]; !ok {
			order = append(order, id)
		}
		if k < nHead {
			m[id] += headWeight
		} else {
			m[id]++
		}
	}
	b := bag{ids: order, tf: make([]float32, len(order))}
	for i, id := range order {
		b.tf[i] = tokvec.TF(m[id], query)
	}
	return b
}

type pair struct {
	q, c bag
	lang uint8
}

// params are the trainable parameters: vectors and log pooling weights.
type params struct {
	dim      int
	E        []float32
	logWDoc  []float32
	logWQry  []float32
	gE       []float32 // Adagrad accumulators, one per row
	gWDoc    []float32
	gWQry    []float32
	vocabLen int
}

// pool computes the un-normalised pooled vector of b into dst.
func (p *params) pool(dst []float32, b bag, logW []float32) {
	clear(dst)
	for k, id := range b.ids {
		a := float32(math.Exp(float64(logW[id]))) * b.tf[k]
		axpy(dst, p.E[int(id)*p.dim:int(id+1)*p.dim], a)
	}
}

func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// makePairs turns documented units into (first sentence, code) pairs.
func makePairs(c *corpus, maxCode int, headWeight float32) []pair {
	var ps []pair
	for _, u := range c.units {
		if u.end-u.codeStart < 3 || len(u.query) < 2 {
			continue
		}
		code := c.toks[u.codeStart:u.end]
		if len(code) > maxCode {
			code = code[:maxCode]
		}
		ps = append(ps, pair{q: makeBag(u.query, true, 0, 1), c: makeBag(code, false, int(u.headEnd-u.codeStart), headWeight), lang: u.lang})
	}
	return ps
}

// idfWeights returns ln(N/df) per term, floored at 0.05.
func idfWeights(c *corpus) []float32 {
	w := make([]float32, len(c.vocab))
	for i, df := range c.df {
		w[i] = float32(math.Max(0.05, math.Log(float64(c.nUnits)/float64(max(1, df)))))
	}
	return w
}

// tune runs contrastive tuning on pairs: each query (pooled first doc
// sentence) must pick its own code (pooled code terms) out of the batch. It
// updates p in place and logs the validation MRR@10 after every epoch.
func tune(p *params, train, valid []pair, cfg tuneConfig, seed uint64, workers int) {
	r := &rng{s: seed ^ 0x5eed}
	dim := p.dim
	B := cfg.Batch
	scale := float32(cfg.Scale)
	log.Printf("tuning on %d pairs (%d held out): validation MRR@10 before %.4f", len(train), len(valid), validMRR(p, valid))
	start := time.Now()
	order := make([]int, len(train))
	for i := range order {
		order[i] = i
	}
	Q := make([]float32, B*dim) // normalised
	Cv := make([]float32, B*dim)
	qn := make([]float32, B)
	cn := make([]float32, B)
	gQ := make([]float32, B*dim)
	gC := make([]float32, B*dim)
	S := make([]float32, B*B)
	gRows := make([]float32, p.vocabLen*dim)
	gWDoc := make([]float32, p.vocabLen)
	gWQry := make([]float32, p.vocabLen)
	touched := make([]bool, p.vocabLen)
	var touchedList []int32
	for ep := 0; ep < cfg.Epochs; ep++ {
		shuffleOrder(order, cfg.Local, r)
		var loss float64
		nb := 0
		for b0 := 0; b0+B <= len(order); b0 += B {
			batch := order[b0 : b0+B]
			// Forward, in parallel over examples (each writes its own rows).
			parallel(workers, B, func(i int) {
				ex := &train[batch[i]]
				q := Q[i*dim : (i+1)*dim]
				c := Cv[i*dim : (i+1)*dim]
				p.pool(q, ex.q, p.logWQry)
				p.pool(c, ex.c, p.logWDoc)
				qn[i] = norm(q)
				cn[i] = norm(c)
			})
			parallel(workers, B, func(i int) {
				row := S[i*B : (i+1)*B]
				q := Q[i*dim : (i+1)*dim]
				for j := 0; j < B; j++ {
					row[j] = scale * vek32.Dot(q, Cv[j*dim:(j+1)*dim])
				}
				// softmax over row, minus one-hot, averaged over the batch
				mx := row[0]
				for _, x := range row {
					mx = max(mx, x)
				}
				var z float64
				for j := range row {
					e := math.Exp(float64(row[j] - mx))
					row[j] = float32(e)
					z += e
				}
				for j := range row {
					row[j] = float32(float64(row[j]) / z)
				}
				row[i] -= 1
				for j := range row {
					row[j] *= scale / float32(B)
				}
			})
			for i := 0; i < B; i++ {
				loss -= math.Log(math.Max(1e-9, float64(S[i*B+i]*float32(B)/scale+1)))
			}
			// gQ_i = sum_j dS_ij C_j ; gC_j = sum_i dS_ij Q_i
			parallel(workers, B, func(i int) {
				g := gQ[i*dim : (i+1)*dim]
				clear(g)
				for j := 0; j < B; j++ {
					axpy(g, Cv[j*dim:(j+1)*dim], S[i*B+j])
				}
				projectOut(g, Q[i*dim:(i+1)*dim], qn[i])
			})
			parallel(workers, B, func(j int) {
				g := gC[j*dim : (j+1)*dim]
				clear(g)
				for i := 0; i < B; i++ {
					axpy(g, Q[i*dim:(i+1)*dim], S[i*B+j])
				}
				projectOut(g, Cv[j*dim:(j+1)*dim], cn[j])
			})
			// Scatter into term gradients, sequentially in a fixed order.
			touchedList = touchedList[:0]
			scatter := func(bg bag, g []float32, logW, gW []float32) {
				for k, id := range bg.ids {
					w := float32(math.Exp(float64(logW[id])))
					a := w * bg.tf[k]
					row := p.E[int(id)*dim : int(id+1)*dim]
					gW[id] += a * vek32.Dot(row, g)
					axpy(gRows[int(id)*dim:int(id+1)*dim], g, a)
					if !touched[id] {
						touched[id] = true
						touchedList = append(touchedList, id)
					}
				}
			}
			for i, ex := range batch {
				scatter(train[ex].q, gQ[i*dim:(i+1)*dim], p.logWQry, gWQry)
				scatter(train[ex].c, gC[i*dim:(i+1)*dim], p.logWDoc, gWDoc)
			}
			sort.Slice(touchedList, func(a, b int) bool { return touchedList[a] < touchedList[b] })
			// Adagrad step.
			lr := float32(cfg.LR)
			wlr := float32(cfg.WeightLR)
			parallel(workers, len(touchedList), func(k int) {
				id := touchedList[k]
				g := gRows[int(id)*dim : int(id+1)*dim]
				ss := vek32.Dot(g, g) / float32(dim)
				p.gE[id] += ss
				step := -lr / float32(math.Sqrt(float64(p.gE[id])+1e-8))
				axpy(p.E[int(id)*dim:int(id+1)*dim], g, step)
				clear(g)
				if wlr > 0 {
					for _, w := range [2]struct{ lw, acc, g []float32 }{{p.logWDoc, p.gWDoc, gWDoc}, {p.logWQry, p.gWQry, gWQry}} {
						gw := w.g[id]
						if gw != 0 {
							w.acc[id] += gw * gw
							w.lw[id] -= wlr * gw / float32(math.Sqrt(float64(w.acc[id])+1e-8))
						}
					}
				}
				gWDoc[id], gWQry[id] = 0, 0
				touched[id] = false
			})
			nb++
		}
		log.Printf("tuning epoch %d: loss %.4f, validation MRR@10 %.4f, %.0fs", ep+1, loss/float64(nb*B), validMRR(p, valid), time.Since(start).Seconds())
	}
}

// shuffleOrder shuffles order; with local > 0 it shuffles runs of local
// consecutive pairs (pairs are in file order, so a run shares a package)
// and keeps each run together.
func shuffleOrder(order []int, local int, r *rng) {
	if local <= 1 {
		for i := range order {
			order[i] = i
		}
		for i := len(order) - 1; i > 0; i-- {
			j := r.intn(i + 1)
			order[i], order[j] = order[j], order[i]
		}
		return
	}
	// A random offset so that runs differ between epochs.
	n := len(order)
	off := r.intn(local)
	var runs [][2]int
	for s := -off; s < n; s += local {
		if a, b := max(0, s), min(n, s+local); a < b {
			runs = append(runs, [2]int{a, b})
		}
	}
	for i := len(runs) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		runs[i], runs[j] = runs[j], runs[i]
	}
	k := 0
	for _, run := range runs {
		for i := run[0]; i < run[1]; i++ {
			order[k] = i
			k++
		}
	}
}

// projectOut turns the gradient with respect to a normalised vector into
// the gradient with respect to the un-normalised one: (g - (g.v)v)/n.
func projectOut(g, v []float32, n float32) {
	d := vek32.Dot(g, v)
	axpy(g, v, -d)
	if n > 0 {
		vek32.MulNumber_Inplace(g, 1/n)
	}
}

// norm normalises v in place and returns its former length.
func norm(v []float32) float32 {
	n := float32(math.Sqrt(float64(vek32.Dot(v, v))))
	if n > 0 {
		vek32.MulNumber_Inplace(v, 1/n)
	}
	return n
}

// parallel runs f(0..n-1) on workers goroutines; f must only write state
// owned by its index.
func parallel(workers, n int, f func(i int)) {
	if workers <= 1 || n < 64 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min(n, (w+1)*chunk)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// validMRR is MRR@10 of the held-out pairs against each other, in pools of
// 500 like the GOROOT evaluation.
func validMRR(p *params, valid []pair) float64 {
	dim := p.dim
	const poolSize = 500
	total, n := 0.0, 0
	for p0 := 0; p0+poolSize <= len(valid); p0 += poolSize {
		pool := valid[p0 : p0+poolSize]
		Q := make([]float32, poolSize*dim)
		C := make([]float32, poolSize*dim)
		for i, ex := range pool {
			p.pool(Q[i*dim:(i+1)*dim], ex.q, p.logWQry)
			norm(Q[i*dim : (i+1)*dim])
			p.pool(C[i*dim:(i+1)*dim], ex.c, p.logWDoc)
			norm(C[i*dim : (i+1)*dim])
		}
		for i := range pool {
			q := Q[i*dim : (i+1)*dim]
			own := vek32.Dot(q, C[i*dim:(i+1)*dim])
			rank := 1
			for j := range pool {
				if j != i && vek32.Dot(q, C[j*dim:(j+1)*dim]) >= own {
					rank++
				}
			}
			if rank <= 10 {
				total += 1 / float64(rank)
			}
			n++
		}
	}
	return total / float64(max(1, n))
}
