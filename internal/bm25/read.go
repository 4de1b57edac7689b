package bm25

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync"
	"unsafe"

	"github.com/cidx/cidx/internal/mmapfile"
	"github.com/cidx/cidx/internal/topk"
)

// Index is an open, memory-mapped BM25 index. It is safe for concurrent
// use; Close it when no search uses it any more.
type Index struct {
	data     []byte
	lengths  []byte
	text     []byte
	termOffs []byte
	info     []byte
	postEnd  uint64 // where the postings section ends
	nTerms   int
	maxDoc   int
	nDocs    int
	avgLen   float64
	accs     sync.Pool
}

// Open maps the index file at path.
func Open(path string) (*Index, error) {
	data, err := mmapfile.Map(path)
	if err != nil {
		return nil, err
	}
	if len(data) < footerSize {
		mmapfile.Unmap(data)
		return nil, formatErr(path, "too short")
	}
	ix, err := parse(data)
	if err != nil {
		mmapfile.Unmap(data)
		return nil, formatErr(path, err.Error())
	}
	return ix, nil
}

func parse(data []byte) (*Index, error) {
	foot := data[len(data)-footerSize:]
	if string(foot[footerSize-len(magic):]) != magic {
		return nil, fmt.Errorf("bad magic")
	}
	le := binary.LittleEndian
	lengthsOff, textOff, termsOff, infoOff := le.Uint64(foot), le.Uint64(foot[8:]), le.Uint64(foot[16:]), le.Uint64(foot[24:])
	ix := &Index{
		data:   data,
		nTerms: int(le.Uint32(foot[32:])),
		maxDoc: int(le.Uint32(foot[36:])),
		nDocs:  int(le.Uint32(foot[40:])),
	}
	total := le.Uint64(foot[44:])
	end := uint64(len(data) - footerSize)
	if !(lengthsOff <= textOff && textOff <= termsOff && termsOff <= infoOff && infoOff <= end) ||
		textOff-lengthsOff != 2*uint64(ix.maxDoc) || infoOff-termsOff != 4*uint64(ix.nTerms+1) || end-infoOff != infoSize*uint64(ix.nTerms) {
		return nil, fmt.Errorf("inconsistent sections")
	}
	ix.postEnd = lengthsOff
	ix.lengths = data[lengthsOff:textOff]
	ix.text = data[textOff:termsOff]
	ix.termOffs = data[termsOff:infoOff]
	ix.info = data[infoOff:end]
	if ix.nDocs > 0 {
		ix.avgLen = float64(total) / float64(ix.nDocs)
	}
	ix.accs.New = func() any { return &accumulator{score: make([]float32, ix.maxDoc)} }
	return ix, nil
}

// Close unmaps the file.
func (ix *Index) Close() error {
	if ix == nil || ix.data == nil {
		return nil
	}
	err := mmapfile.Unmap(ix.data)
	ix.data = nil
	return err
}

// Docs is the number of documents.
func (ix *Index) Docs() int { return ix.nDocs }

// MaxDoc is one more than the highest document id the index has room for.
func (ix *Index) MaxDoc() int { return ix.maxDoc }

// Terms is the number of distinct terms.
func (ix *Index) Terms() int { return ix.nTerms }

func (ix *Index) length(doc uint32) uint16 {
	return binary.LittleEndian.Uint16(ix.lengths[2*doc:])
}

// term returns term i without copying (valid while the index is open).
func (ix *Index) term(i int) string {
	from := binary.LittleEndian.Uint32(ix.termOffs[4*i:])
	to := binary.LittleEndian.Uint32(ix.termOffs[4*i+4:])
	if from == to {
		return ""
	}
	return unsafe.String(&ix.text[from], int(to-from))
}

// find returns the ordinal of term, or -1.
func (ix *Index) find(term string) int {
	i := sort.Search(ix.nTerms, func(i int) bool { return ix.term(i) >= term })
	if i < ix.nTerms && ix.term(i) == term {
		return i
	}
	return -1
}

func (ix *Index) df(i int) int { return int(binary.LittleEndian.Uint32(ix.info[infoSize*i:])) }

// postingBytes returns the encoded postings of term i.
func (ix *Index) postingBytes(i int) []byte {
	from := binary.LittleEndian.Uint64(ix.info[infoSize*i+4:])
	to := ix.postEnd
	if i+1 < ix.nTerms {
		to = binary.LittleEndian.Uint64(ix.info[infoSize*(i+1)+4:])
	}
	return ix.data[from:to]
}

// appendPostings decodes the postings of term i onto dst.
func (ix *Index) appendPostings(dst []posting, i int) []posting {
	p := ix.postingBytes(i)
	doc := uint32(0)
	for len(p) > 0 {
		v, n := binary.Uvarint(p)
		p = p[n:]
		doc += uint32(v >> 1)
		tf := uint8(1)
		if v&1 == 0 {
			tf, p = p[0], p[1:]
		}
		dst = append(dst, posting{doc, tf})
	}
	return dst
}

// DocFreq is the number of documents holding term.
func (ix *Index) DocFreq(term string) int {
	if i := ix.find(term); i >= 0 {
		return ix.df(i)
	}
	return 0
}

// EachTerm calls fn with every term in order until fn returns false. The
// string is only valid during the call.
func (ix *Index) EachTerm(fn func(term string) bool) {
	for i := range ix.nTerms {
		if !fn(ix.term(i)) {
			return
		}
	}
}

// Hit is a ranked document.
type Hit struct {
	Doc   uint32
	Score float64
}

type accumulator struct {
	score   []float32
	touched []uint32
}

// idf is FTS5's: never below a tiny positive value, so that a term in
// most documents still counts a little.
func (ix *Index) idf(df int) float64 {
	v := math.Log((float64(ix.nDocs) - float64(df) + 0.5) / (float64(df) + 0.5))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// Search returns the k best documents for terms (each counted once),
// best first, among those keep accepts (nil keeps all). Ties go to the
// lower document id.
func (ix *Index) Search(terms []string, k int, keep func(doc uint32) bool) []Hit {
	if k <= 0 || ix.nDocs == 0 {
		return nil
	}
	acc := ix.accs.Get().(*accumulator)
	defer func() {
		for _, d := range acc.touched {
			acc.score[d] = 0
		}
		acc.touched = acc.touched[:0]
		ix.accs.Put(acc)
	}()
	// Per-length normalisation, computed once per distinct length is not
	// worth a table: the division is cheap next to the decode.
	norm := k1 / ix.avgLen * b
	base := k1 * (1 - b)
	one := freq(1)
	done := make(map[string]bool, len(terms))
	for _, t := range terms {
		if done[t] {
			continue
		}
		done[t] = true
		i := ix.find(t)
		if i < 0 {
			continue
		}
		idf := ix.idf(ix.df(i))
		p := ix.postingBytes(i)
		doc := uint32(0)
		for len(p) > 0 {
			var v uint64
			if p[0] < 0x80 {
				v = uint64(p[0])
				p = p[1:]
			} else {
				var n int
				v, n = binary.Uvarint(p)
				p = p[n:]
			}
			doc += uint32(v >> 1)
			f := one
			if v&1 == 0 {
				f = freq(p[0])
				p = p[1:]
			}
			dl := float64(binary.LittleEndian.Uint16(ix.lengths[2*doc:]))
			s := float32(idf * f * (k1 + 1) / (f + base + norm*dl))
			if acc.score[doc] == 0 {
				acc.touched = append(acc.touched, doc)
			}
			acc.score[doc] += s
		}
	}
	best := topk.New(k, func(a, b Hit) bool {
		if a.Score != b.Score {
			return a.Score < b.Score
		}
		return a.Doc > b.Doc
	})
	for _, d := range acc.touched {
		if keep == nil || keep(d) {
			best.Push(Hit{d, float64(acc.score[d])})
		}
	}
	return best.Sorted()
}
