package evalset

import (
	"hash/fnv"
	"math"
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cidx/cidx/internal/codetok"
)

func TestScratchLexical(t *testing.T) {
	pairs, _ := GoFuncs(filepath.Join(runtime.GOROOT(), "src"), 500)
	n := len(pairs)
	df := map[string]float64{}
	docTF := make([]map[string]float64, n)
	for i, p := range pairs {
		tf := map[string]float64{}
		for _, w := range codetok.Terms(p.Doc) {
			tf[w]++
		}
		for w := range tf {
			df[w]++
		}
		docTF[i] = tf
	}
	idf := func(w string) float64 {
		d := df[w]
		if d == 0 {
			d = 1
		}
		return math.Log(float64(n+1) / d)
	}
	vec := func(tf map[string]float64, sub bool) map[string]float64 {
		v := map[string]float64{}
		s := 0.0
		for w, f := range tf {
			x := idf(w)
			if sub {
				x *= 1 + math.Log(f)
			} else {
				x *= f
			}
			v[w] = x
			s += x * x
		}
		for w := range v {
			v[w] /= math.Sqrt(s)
		}
		return v
	}
	for _, sub := range []bool{false, true} {
		dv := make([]map[string]float64, n)
		for i := range dv {
			dv[i] = vec(docTF[i], sub)
		}
		qv := make([]map[string]float64, n)
		for i, p := range pairs {
			tf := map[string]float64{}
			for _, w := range codetok.Terms(p.Query) {
				tf[w]++
			}
			qv[i] = vec(tf, false)
		}
		mrr := MRR(n, 10, func(i, j int) float64 {
			s := 0.0
			for w, x := range qv[i] {
				s += x * dv[j][w]
			}
			return s
		})
		t.Logf("sparse tfidf sublinear=%v: %.4f", sub, mrr)
		for _, dim := range []int{128, 256, 512, 1024, 4096} {
			proj := map[string][]float64{}
			get := func(w string) []float64 {
				if v, ok := proj[w]; ok {
					return v
				}
				h := fnv.New64a()
				h.Write([]byte(w))
				r := rand.New(rand.NewSource(int64(h.Sum64())))
				v := make([]float64, dim)
				for k := range v {
					v[k] = r.NormFloat64() / math.Sqrt(float64(dim))
				}
				proj[w] = v
				return v
			}
			dense := func(m map[string]float64) []float64 {
				out := make([]float64, dim)
				for w, x := range m {
					e := get(w)
					for k := range out {
						out[k] += x * e[k]
					}
				}
				return out
			}
			D := make([][]float64, n)
			Q := make([][]float64, n)
			for i := range D {
				D[i] = dense(dv[i])
				Q[i] = dense(qv[i])
			}
			mrr := MRR(n, 10, func(i, j int) float64 {
				s, nn := 0.0, 0.0
				for k := range Q[i] {
					s += Q[i][k] * D[j][k]
					nn += D[j][k] * D[j][k]
				}
				return s / math.Sqrt(nn)
			})
			t.Logf("  random projection dim=%d: %.4f", dim, mrr)
		}
	}
}
