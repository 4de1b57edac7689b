package bm25

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/cidx/cidx/internal/codetok"
)

// Builder collects the documents of a build (or the new documents of an
// incremental build) in memory: each distinct term is stored once, and a
// posting takes 8 bytes. It is not safe for concurrent use.
type Builder struct {
	ids     map[string]uint32 // term -> term id
	terms   []string          // by term id
	lists   [][]posting       // by term id
	lengths map[uint32]uint16

	// Per-document scratch, indexed by term id.
	count   []int32
	flags   []uint8
	touched []uint32
	scan    codetok.Scanner
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{ids: map[string]uint32{}, lengths: map[uint32]uint16{}}
}

func (bl *Builder) intern(term []byte) uint32 {
	if id, ok := bl.ids[string(term)]; ok {
		return id
	}
	id := uint32(len(bl.terms))
	t := string(term)
	bl.ids[t] = id
	bl.terms = append(bl.terms, t)
	bl.lists = append(bl.lists, nil)
	bl.count = append(bl.count, 0)
	bl.flags = append(bl.flags, 0)
	return id
}

// see counts one occurrence of term in a field of the current document.
func (bl *Builder) see(term []byte, field uint8) {
	id := bl.intern(term)
	if bl.count[id] == 0 && bl.flags[id] == 0 {
		bl.touched = append(bl.touched, id)
	}
	if field == 0 {
		bl.count[id]++
	} else {
		bl.flags[id] |= field
	}
}

// finish turns the current document's counts into postings.
func (bl *Builder) finish(doc uint32, length int) {
	for _, id := range bl.touched {
		tf := packTF(int(bl.count[id]), bl.flags[id]&pathBit != 0, bl.flags[id]&symbolBit != 0)
		bl.lists[id] = append(bl.lists[id], posting{doc, tf})
		bl.count[id], bl.flags[id] = 0, 0
	}
	bl.touched = bl.touched[:0]
	// A present document has a length of at least 1: 0 marks an absent one.
	bl.lengths[doc] = uint16(min(max(1, length), 0xFFFF))
}

// AddText tokenizes (with codetok, as queries are) and indexes one
// document. Ids must be unique among the documents of a Builder.
func (bl *Builder) AddText(id uint32, body, path, symbol string) {
	n := 0
	for i, text := range []string{body, path, symbol} {
		field := [3]uint8{0, pathBit, symbolBit}[i]
		bl.scan.Scan(text, func(term []byte) {
			bl.see(term, field)
			n++
		})
	}
	bl.finish(id, n)
}

// Add indexes d, whose fields are already tokenized.
func (bl *Builder) Add(d Doc) {
	for i, list := range [][]string{d.Body, d.Path, d.Symbol} {
		field := [3]uint8{0, pathBit, symbolBit}[i]
		for _, t := range list {
			bl.see([]byte(t), field)
		}
	}
	bl.finish(d.ID, len(d.Body)+len(d.Path)+len(d.Symbol))
}

// Write writes the index of the builder's documents to path.
func (bl *Builder) Write(path string) error {
	return write(path, nil, nil, bl)
}

// Merge writes to path the index old would be with the documents removed
// reports dropped and the builder's documents added: what an incremental
// build needs. old is not changed.
func Merge(path string, old *Index, removed func(doc uint32) bool, bl *Builder) error {
	return write(path, old, removed, bl)
}

// countingWriter tracks the offset of what it has written.
type countingWriter struct {
	w   *bufio.Writer
	off uint64
	buf [binary.MaxVarintLen64]byte
}

func (c *countingWriter) bytes(p []byte) {
	c.w.Write(p)
	c.off += uint64(len(p))
}

func (c *countingWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(c.buf[:], v)
	c.bytes(c.buf[:4])
}

func (c *countingWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(c.buf[:], v)
	c.bytes(c.buf[:8])
}

func (c *countingWriter) uvarint(v uint64) {
	n := binary.PutUvarint(c.buf[:], v)
	c.bytes(c.buf[:n])
}

func write(path string, old *Index, removed func(uint32) bool, bl *Builder) error {
	if bl == nil {
		bl = NewBuilder()
	}
	if removed == nil {
		removed = func(uint32) bool { return false }
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(path)
		}
	}()
	w := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}

	// Document lengths: the old ones minus the removed, plus the new.
	maxDoc := uint32(0)
	if old != nil {
		maxDoc = uint32(old.maxDoc)
	}
	for id := range bl.lengths {
		maxDoc = max(maxDoc, id+1)
	}
	lengths := make([]uint16, maxDoc)
	if old != nil {
		for id := range uint32(old.maxDoc) {
			if !removed(id) {
				lengths[id] = old.length(id)
			}
		}
	}
	for id, n := range bl.lengths {
		lengths[id] = n
	}

	// Terms: the sorted union of the old and the new.
	newTerms := slices.Clone(bl.terms)
	sort.Strings(newTerms)
	postings := func(t string) []posting { return bl.lists[bl.ids[t]] }
	var kept []string
	type info struct {
		df  uint32
		off uint64
	}
	var infos []info
	var merged []posting
	emit := func(term string, oldList []posting, newList []posting) {
		merged = merged[:0]
		i, j := 0, 0
		for i < len(oldList) || j < len(newList) {
			switch {
			case j == len(newList) || i < len(oldList) && oldList[i].doc < newList[j].doc:
				if !removed(oldList[i].doc) {
					merged = append(merged, oldList[i])
				}
				i++
			case i == len(oldList) || newList[j].doc < oldList[i].doc:
				merged = append(merged, newList[j])
				j++
			default: // the same document in both: the new one replaces it
				merged = append(merged, newList[j])
				i++
				j++
			}
		}
		if len(merged) == 0 {
			return
		}
		kept = append(kept, term)
		infos = append(infos, info{uint32(len(merged)), w.off})
		prev := uint32(0)
		for _, p := range merged {
			if p.tf == 1 {
				w.uvarint(uint64(p.doc-prev)<<1 | 1)
			} else {
				w.uvarint(uint64(p.doc-prev) << 1)
				w.bytes([]byte{p.tf})
			}
			prev = p.doc
		}
	}
	sortPostings := func(list []posting) []posting {
		if !slices.IsSortedFunc(list, func(a, b posting) int { return int(a.doc) - int(b.doc) }) {
			slices.SortFunc(list, func(a, b posting) int { return int(a.doc) - int(b.doc) })
		}
		return list
	}
	var oldList []posting
	j := 0
	if old != nil {
		for i := range old.nTerms {
			t := old.term(i)
			for j < len(newTerms) && newTerms[j] < t {
				emit(newTerms[j], nil, sortPostings(postings(newTerms[j])))
				j++
			}
			oldList = old.appendPostings(oldList[:0], i)
			if j < len(newTerms) && newTerms[j] == t {
				emit(t, oldList, sortPostings(postings(t)))
				j++
			} else {
				emit(t, oldList, nil)
			}
		}
	}
	for ; j < len(newTerms); j++ {
		emit(newTerms[j], nil, sortPostings(postings(newTerms[j])))
	}

	lengthsOff := w.off
	var total uint64
	var nDocs uint32
	for _, n := range lengths {
		w.bytes([]byte{byte(n), byte(n >> 8)})
		if n > 0 {
			total += uint64(n)
			nDocs++
		}
	}
	textOff := w.off
	offs := make([]uint32, 0, len(kept)+1)
	var textLen uint32
	for _, t := range kept {
		offs = append(offs, textLen)
		w.bytes([]byte(t))
		textLen += uint32(len(t))
	}
	offs = append(offs, textLen)
	termsOff := w.off
	for _, o := range offs {
		w.u32(o)
	}
	infoOff := w.off
	for _, in := range infos {
		w.u32(in.df)
		w.u64(in.off)
	}
	for _, v := range []uint64{lengthsOff, textOff, termsOff, infoOff} {
		w.u64(v)
	}
	w.u32(uint32(len(kept)))
	w.u32(maxDoc)
	w.u32(nDocs)
	w.u64(total)
	w.bytes([]byte(magic))
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	ok = true
	return nil
}
