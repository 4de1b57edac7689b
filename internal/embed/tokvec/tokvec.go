// Package tokvec is the token-vector model behind the builtin embedder: a
// vocabulary of codetok terms, one vector per term, and one pooling weight
// per term for each side (documents and queries). A text is embedded as the
// weighted sum of the vectors of its terms, with a common component
// projected out, L2-normalised:
//
//	v = sum over distinct terms t of  w(t) * tf(t) * E[t]
//	v = v - sum_k (v . C_k) C_k
//	v = v / |v|
//
// where tf(t) = 1 + ln(count) for documents and count for queries, w(t) is
// the term's document or query weight (its IDF from the training corpus,
// refined by training), E[t] its vector and C_k the shipped common
// components (SIF-style: directions shared by all texts that carry no
// meaning).
//
// Terms outside the vocabulary are not ignored: each one is hashed to a few
// signed coordinates (feature hashing) with the weight of the rarest
// vocabulary terms, so that an exact match on a rare identifier
// ("xyzzyHandler" in both query and code) still counts.
//
// The file format (little-endian) is:
//
//	"CIDXTV01"
//	u32 dim, u32 vocab size, u32 number of common components, u32 OOV hashes
//	f32 OOV weight, f32 query OOV weight, f32 head weight
//	u16 name length, name
//	vocab size x (u8 length, term bytes)
//	vocab size x f32 document weight
//	vocab size x f32 query weight
//	vocab size x f32 row scale
//	vocab size x dim x i8 quantised vectors (value = q * scale / 127)
//	components x dim x f32 common components
//	u32 CRC-32 (IEEE) of everything before it
package tokvec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"sync"

	"github.com/cidx/cidx/internal/codetok"
	"github.com/viterin/vek/vek32"
)

const magic = "CIDXTV01"

// Model is a loaded token-vector model. It is safe for concurrent use once
// built.
type Model struct {
	Name        string    // model name, e.g. "code-v1"
	Dim         int       // vector dimension
	Vocab       []string  // terms
	DocWeight   []float32 // per-term pooling weight for documents
	QueryWeight []float32 // per-term pooling weight for queries
	Vec         []float32 // len(Vocab) * Dim, row-major
	Common      []float32 // k * Dim unit vectors to project out
	OOVHashes   int       // coordinates per out-of-vocabulary term (0: ignore OOV terms)
	OOVWeight   float32   // pooling weight of an OOV term in documents
	OOVQuery    float32   // pooling weight of an OOV term in queries
	HeadWeight  float32   // documents: factor for the terms of the first non-blank line (0 or 1: none)

	index map[string]int32
	pool  sync.Pool
}

// Init builds the term index; call it after filling the fields by hand.
func (m *Model) Init() {
	m.index = make(map[string]int32, len(m.Vocab))
	for i, t := range m.Vocab {
		m.index[t] = int32(i)
	}
	m.pool.New = func() any {
		return &scratch{count: make([]float32, len(m.Vocab)), tmp: make([]float32, m.Dim)}
	}
}

// ID returns the index of term t, or -1.
func (m *Model) ID(t string) int32 {
	if i, ok := m.index[t]; ok {
		return i
	}
	return -1
}

// Row returns the vector of term i.
func (m *Model) Row(i int32) []float32 {
	return m.Vec[int(i)*m.Dim : int(i+1)*m.Dim]
}

type scratch struct {
	tmp     []float32 // Dim floats for axpy
	sc      codetok.Scanner
	count   []float32 // per-term count, zero outside touched
	touched []int32
	oovIdx  map[uint64]int // OOV term hash -> index in oov
	oov     []oovTerm      // OOV terms in order of first appearance
}

type oovTerm struct {
	h     uint64
	count float32
}

// TF maps a term count to its pooling factor.
func TF(count float32, query bool) float32 {
	if query || count <= 1 {
		return count
	}
	return 1 + float32(math.Log(float64(count)))
}

// Embed writes the embedding of text into dst (len Dim) and reports whether
// the text had any term; a text without terms gets the zero vector.
func (m *Model) Embed(dst []float32, text string, query bool) bool {
	s := m.pool.Get().(*scratch)
	defer m.pool.Put(s)
	clear(dst)
	s.touched = s.touched[:0]
	s.oov = s.oov[:0]
	if len(s.oovIdx) > 0 {
		clear(s.oovIdx)
	}
	inc := float32(1)
	add := func(term []byte) {
		if i, ok := m.index[string(term)]; ok {
			if s.count[i] == 0 {
				s.touched = append(s.touched, i)
			}
			s.count[i] += inc
			return
		}
		if m.OOVHashes > 0 {
			if s.oovIdx == nil {
				s.oovIdx = map[uint64]int{}
			}
			h := hash64(term)
			k, ok := s.oovIdx[h]
			if !ok {
				k = len(s.oov)
				s.oovIdx[h] = k
				s.oov = append(s.oov, oovTerm{h: h})
			}
			s.oov[k].count += inc
		}
	}
	if !query && m.HeadWeight > 1 {
		head, rest := SplitHead(text)
		inc = m.HeadWeight
		s.sc.Scan(head, add)
		inc = 1
		s.sc.Scan(rest, add)
	} else {
		s.sc.Scan(text, add)
	}
	if len(s.touched) == 0 && len(s.oov) == 0 {
		return false
	}
	weights := m.DocWeight
	oovW := m.OOVWeight
	if query {
		weights, oovW = m.QueryWeight, m.OOVQuery
	}
	dim := m.Dim
	for _, i := range s.touched {
		a := weights[i] * TF(s.count[i], query)
		s.count[i] = 0
		if a == 0 {
			continue
		}
		// dst += a * row, with SIMD.
		vek32.MulNumber_Into(s.tmp, m.Vec[int(i)*dim:int(i+1)*dim], a)
		vek32.Add_Inplace(dst, s.tmp)
	}
	if len(s.oov) > 0 {
		k := m.OOVHashes
		inv := float32(1 / math.Sqrt(float64(k)))
		for _, o := range s.oov {
			a := oovW * TF(o.count, query) * inv
			x := o.h
			for j := 0; j < k; j++ {
				x = splitmix(x)
				pos := int(x>>1) % dim
				if x&1 == 0 {
					dst[pos] += a
				} else {
					dst[pos] -= a
				}
			}
		}
	}
	m.removeCommon(dst)
	return normalize(dst)
}

// SplitHead splits text after its head line, the line whose terms
// HeadWeight boosts: the first non-blank line, if it is indented no deeper
// than any later non-blank line (a declaration — a function's signature, a
// class line — or the doc comment above it). A chunk that starts in the
// middle of a block has no head: head is "" and rest is text.
func SplitHead(text string) (head, rest string) {
	i := 0
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	j := i
	for j < len(text) && text[j] != '\n' {
		j++
	}
	ls := i
	for ls > 0 && text[ls-1] != '\n' {
		ls--
	}
	indent := i - ls
	for k := j; k < len(text); {
		// text[k] is '\n': measure the next line.
		k++
		w := 0
		for k+w < len(text) && (text[k+w] == ' ' || text[k+w] == '\t') {
			w++
		}
		e := k + w
		if e < len(text) && text[e] != '\n' && text[e] != '\r' && w < indent {
			return "", text
		}
		for e < len(text) && text[e] != '\n' {
			e++
		}
		k = e
	}
	return text[:j], text[j:]
}

// removeCommon projects the common components out of v.
func (m *Model) removeCommon(v []float32) {
	for k := 0; k+m.Dim <= len(m.Common); k += m.Dim {
		c := m.Common[k : k+m.Dim]
		axpy(v, c, -dot(v, c))
	}
}

func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// OOVCoords appends to dst the coordinates and signs (+1/-1) that an
// out-of-vocabulary term is hashed to; the trainer uses it to mirror Embed.
func (m *Model) OOVCoords(term string) (pos []int, sign []float32) {
	x := hash64([]byte(term))
	for j := 0; j < m.OOVHashes; j++ {
		x = splitmix(x)
		pos = append(pos, int(x>>1)%m.Dim)
		if x&1 == 0 {
			sign = append(sign, 1)
		} else {
			sign = append(sign, -1)
		}
	}
	return pos, sign
}

func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	i := 0
	for ; i+4 <= len(y); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(y); i++ {
		y[i] += a * x[i]
	}
}

func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return s0 + s1 + s2 + s3
}

// normalize scales v to unit length and reports whether it was non-zero.
func normalize(v []float32) bool {
	n := math.Sqrt(float64(dot(v, v)))
	if n == 0 || math.IsNaN(n) {
		clear(v)
		return false
	}
	inv := float32(1 / n)
	for i := range v {
		v[i] *= inv
	}
	return true
}

// Write encodes m, quantising the vectors to int8 with one scale per row.
func (m *Model) Write(w io.Writer) error {
	var buf bytes.Buffer
	le := binary.LittleEndian
	put32 := func(x uint32) { buf.Write(le.AppendUint32(nil, x)) }
	putf := func(x float32) { put32(math.Float32bits(x)) }
	if m.Dim <= 0 || len(m.Vec) != len(m.Vocab)*m.Dim || len(m.DocWeight) != len(m.Vocab) || len(m.QueryWeight) != len(m.Vocab) || len(m.Common)%m.Dim != 0 {
		return errors.New("tokvec: inconsistent model")
	}
	buf.WriteString(magic)
	put32(uint32(m.Dim))
	put32(uint32(len(m.Vocab)))
	put32(uint32(len(m.Common) / m.Dim))
	put32(uint32(m.OOVHashes))
	putf(m.OOVWeight)
	putf(m.OOVQuery)
	putf(m.HeadWeight)
	buf.Write(le.AppendUint16(nil, uint16(len(m.Name))))
	buf.WriteString(m.Name)
	for _, t := range m.Vocab {
		if len(t) > 255 {
			return fmt.Errorf("tokvec: term too long: %q", t)
		}
		buf.WriteByte(byte(len(t)))
		buf.WriteString(t)
	}
	for _, x := range m.DocWeight {
		putf(x)
	}
	for _, x := range m.QueryWeight {
		putf(x)
	}
	q := make([]byte, len(m.Vec))
	for i := range m.Vocab {
		row := m.Vec[i*m.Dim : (i+1)*m.Dim]
		var mx float32
		for _, x := range row {
			mx = max(mx, float32(math.Abs(float64(x))))
		}
		putf(mx)
		for j, x := range row {
			v := 0.0
			if mx > 0 {
				v = math.Round(float64(x / mx * 127))
			}
			q[i*m.Dim+j] = byte(int8(v))
		}
	}
	buf.Write(q)
	for _, x := range m.Common {
		putf(x)
	}
	put32(crc32.ChecksumIEEE(buf.Bytes()))
	_, err := w.Write(buf.Bytes())
	return err
}

// Read decodes a model written by Write and dequantises its vectors.
func Read(data []byte) (*Model, error) {
	if len(data) < len(magic)+4 || string(data[:len(magic)]) != magic {
		return nil, errors.New("tokvec: not a model file")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errors.New("tokvec: checksum mismatch")
	}
	r := bufio.NewReader(bytes.NewReader(body[len(magic):]))
	var hdr struct {
		Dim, Vocab, Common, OOVHashes uint32
		OOVWeight, OOVQuery, Head     float32
		NameLen                       uint16
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("tokvec: header: %w", err)
	}
	if hdr.Dim == 0 || hdr.Dim > 4096 || hdr.Vocab > 1<<22 || hdr.Common > 64 || hdr.OOVHashes > 64 {
		return nil, errors.New("tokvec: implausible header")
	}
	name := make([]byte, hdr.NameLen)
	if _, err := io.ReadFull(r, name); err != nil {
		return nil, err
	}
	m := &Model{Name: string(name), Dim: int(hdr.Dim), OOVHashes: int(hdr.OOVHashes), OOVWeight: hdr.OOVWeight, OOVQuery: hdr.OOVQuery, HeadWeight: hdr.Head}
	n := int(hdr.Vocab)
	m.Vocab = make([]string, n)
	for i := range m.Vocab {
		l, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		b := make([]byte, l)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		m.Vocab[i] = string(b)
	}
	readF := func(k int) ([]float32, error) {
		out := make([]float32, k)
		err := binary.Read(r, binary.LittleEndian, out)
		return out, err
	}
	var err error
	if m.DocWeight, err = readF(n); err != nil {
		return nil, err
	}
	if m.QueryWeight, err = readF(n); err != nil {
		return nil, err
	}
	scales, err := readF(n)
	if err != nil {
		return nil, err
	}
	q := make([]byte, n*m.Dim)
	if _, err := io.ReadFull(r, q); err != nil {
		return nil, err
	}
	m.Vec = make([]float32, n*m.Dim)
	for i := 0; i < n; i++ {
		s := scales[i] / 127
		row := m.Vec[i*m.Dim : (i+1)*m.Dim]
		for j := range row {
			row[j] = float32(int8(q[i*m.Dim+j])) * s
		}
	}
	if m.Common, err = readF(int(hdr.Common) * m.Dim); err != nil {
		return nil, err
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.New("tokvec: trailing data")
	}
	m.Init()
	return m, nil
}
