package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"unsafe"

	"github.com/viterin/vek/vek32"

	"github.com/cidx/cidx/internal/mmapfile"
	"github.com/cidx/cidx/internal/topk"
)

// The vector file holds one row per chunk, in chunk rowid order:
//
//	magic "CIDXVEC1" (float32) or "CIDXVEC8" (int8 + per-row scale)
//	uint32 dim, uint32 count
//	count x int64 chunk rowid
//	count x (dim float32) | count x (float32 scale, dim int8)
//
// It is written once, then memory-mapped read-only and searched exactly.
const (
	magicF32 = "CIDXVEC1"
	magicI8  = "CIDXVEC8"
)

// vecRow is one vector to write: v, or row ord of the vector file from
// (carried over from the previous build; int8 rows are copied verbatim).
type vecRow struct {
	rowid int64
	v     []float32
	from  *vectors
	ord   int
}

// writeVectors writes rows (sorted by rowid) to path atomically.
func writeVectors(path string, dim int, rows []vecRow, quantize bool) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	magic := magicF32
	if quantize {
		magic = magicI8
	}
	w.WriteString(magic)
	binary.Write(w, binary.LittleEndian, uint32(dim))
	binary.Write(w, binary.LittleEndian, uint32(len(rows)))
	for _, r := range rows {
		binary.Write(w, binary.LittleEndian, r.rowid)
	}
	buf := make([]byte, 4*dim+4)
	vbuf := make([]float32, dim)
	for _, r := range rows {
		if r.from != nil {
			if r.from.dim != dim {
				f.Close()
				os.Remove(tmp)
				return fmt.Errorf("carried vector of chunk %d has %d dimensions, want %d", r.rowid, r.from.dim, dim)
			}
			if quantize && r.from.int8 {
				w.Write(r.from.rows8[r.ord*(4+dim) : (r.ord+1)*(4+dim)])
				continue
			}
			r.v = r.from.row(r.ord, vbuf)
		}
		if len(r.v) != dim {
			f.Close()
			os.Remove(tmp)
			return fmt.Errorf("vector of chunk %d has %d dimensions, want %d", r.rowid, len(r.v), dim)
		}
		if quantize {
			var maxAbs float32
			for _, x := range r.v {
				maxAbs = max(maxAbs, float32(math.Abs(float64(x))))
			}
			scale := maxAbs / 127
			if scale == 0 {
				scale = 1
			}
			binary.LittleEndian.PutUint32(buf, math.Float32bits(scale))
			for i, x := range r.v {
				buf[4+i] = byte(int8(math.Round(float64(x / scale))))
			}
			w.Write(buf[:4+dim])
			continue
		}
		for i, x := range r.v {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		w.Write(buf[:4*dim])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	f.Close()
	return os.Rename(tmp, path)
}

// vectors is a memory-mapped vector file.
type vectors struct {
	data   []byte
	dim    int
	count  int
	int8   bool
	rowids []int64
	f32    []float32 // count*dim, when !int8
	rows8  []byte    // count*(4+dim), when int8
}

func openVectors(path string) (*vectors, error) { return mapVectors(path, true) }

// mapVectors maps a vector file; decode says whether int8 rows are also
// decoded into memory for searching.
func mapVectors(path string, decode bool) (*vectors, error) {
	data, err := mmapfile.Map(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 16 {
		mmapfile.Unmap(data)
		return nil, errors.New("vector file too short")
	}
	v := &vectors{data: data}
	switch string(data[:8]) {
	case magicF32:
	case magicI8:
		v.int8 = true
	default:
		mmapfile.Unmap(data)
		return nil, fmt.Errorf("%s is not a vector file", path)
	}
	v.dim = int(binary.LittleEndian.Uint32(data[8:]))
	v.count = int(binary.LittleEndian.Uint32(data[12:]))
	off := 16
	rowBytes := 4 * v.dim
	if v.int8 {
		rowBytes = 4 + v.dim
	}
	if len(data) != off+8*v.count+rowBytes*v.count {
		mmapfile.Unmap(data)
		return nil, fmt.Errorf("vector file %s has the wrong size", path)
	}
	if v.count > 0 {
		v.rowids = unsafe.Slice((*int64)(unsafe.Pointer(&data[off])), v.count)
	}
	off += 8 * v.count
	if v.count > 0 {
		if v.int8 && !decode {
			v.rows8 = data[off:]
		} else if v.int8 {
			// Decoded once into memory: the scan then runs on SIMD float32
			// dot products, as fast as for a float32 file, while the disk
			// holds a quarter of the bytes.
			v.rows8 = data[off:]
			v.f32 = make([]float32, v.count*v.dim)
			for i := range v.count {
				v.decode(i, v.f32[i*v.dim:(i+1)*v.dim])
			}
		} else {
			v.f32 = unsafe.Slice((*float32)(unsafe.Pointer(&data[off])), v.count*v.dim)
		}
	}
	return v, nil
}

func (v *vectors) close() error {
	if v == nil || v.data == nil {
		return nil
	}
	err := mmapfile.Unmap(v.data)
	v.data = nil
	return err
}

// row returns vector i, decoded into buf when the rows are int8 and were
// not decoded at open.
func (v *vectors) row(i int, buf []float32) []float32 {
	if v.f32 == nil {
		v.decode(i, buf)
		return buf
	}
	return v.f32[i*v.dim : (i+1)*v.dim]
}

// decode writes int8 row i as float32 into buf.
func (v *vectors) decode(i int, buf []float32) {
	r := v.rows8[i*(4+v.dim) : (i+1)*(4+v.dim)]
	scale := math.Float32frombits(binary.LittleEndian.Uint32(r))
	for j := 0; j < v.dim; j++ {
		buf[j] = float32(int8(r[4+j])) * scale
	}
}

// scored is a search candidate.
type scored struct {
	ord   int
	score float32
}

// search returns the k rows with the highest dot product with q (vectors
// are normalised, so this is cosine similarity), best first, among the
// rows keep accepts (keep nil = all).
func (v *vectors) search(q []float32, k int, keep func(ord int) bool) []scored {
	if v.count == 0 || k <= 0 {
		return nil
	}
	best := topk.New(k, func(a, b scored) bool {
		if a.score != b.score {
			return a.score < b.score
		}
		return a.ord > b.ord
	})
	buf := make([]float32, v.dim)
	for i := 0; i < v.count; i++ {
		if keep == nil || keep(i) {
			best.Push(scored{i, vek32.Dot(q, v.row(i, buf))})
		}
	}
	return best.Sorted()
}
