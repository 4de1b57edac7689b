package embed

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/cidx/cidx/internal/embed/tokvec"
)

// builtinModel is the shipped model file; see builtin/README.md for how it
// was trained and cmd/cidx-train-embed for the trainer.
//
//go:embed builtin/code-v1.bin
var builtinModel []byte

var (
	builtinOnce sync.Once
	builtinM    *tokvec.Model
	builtinErr  error
)

// Builtin is the offline embedder: trained token vectors pooled with
// learned TF-IDF-style weights (see internal/embed/tokvec). It needs no
// network and no files beyond the binary, embeds a 60-line chunk in tens of
// microseconds, and is safe for concurrent use.
//
// A text is tokenised with codetok (identifiers split into sub-words);
// terms outside the vocabulary are hashed so exact matches on rare
// identifiers still count. Documents weight the terms of their first line
// (a function's signature) more. A text without any term (empty, or only
// punctuation and stopwords) gets the zero vector, which is similar to
// nothing.
type Builtin struct {
	m  *tokvec.Model
	id string
}

// NewBuiltin loads the model shipped in the binary. The model is decoded
// once per process and shared.
func NewBuiltin() (*Builtin, error) {
	builtinOnce.Do(func() {
		builtinM, builtinErr = tokvec.Read(builtinModel)
		if builtinErr != nil {
			builtinErr = fmt.Errorf("embed: builtin model: %w", builtinErr)
		}
	})
	if builtinErr != nil {
		return nil, builtinErr
	}
	// The ID names the model file's content too, so that shipping a
	// retrained file re-embeds every index built with the old one.
	sum := sha256.Sum256(builtinModel)
	return &Builtin{m: builtinM, id: "builtin:" + builtinM.Name + "-" + hex.EncodeToString(sum[:4]) + ":" + strconv.Itoa(builtinM.Dim)}, nil
}

// ID returns "builtin:<model name>-<content hash>:<dim>", e.g. "builtin:code-v1-1a2b3c4d:256".
func (b *Builtin) ID() string { return b.id }

// Dim returns the vector size.
func (b *Builtin) Dim() int { return b.m.Dim }

// Embed embeds texts, using all CPUs for large batches. It stops early
// when ctx is cancelled.
func (b *Builtin) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*b.m.Dim)
	query := kind == Query
	one := func(i int) {
		v := backing[i*b.m.Dim : (i+1)*b.m.Dim : (i+1)*b.m.Dim]
		b.m.Embed(v, texts[i], query)
		out[i] = v
	}
	workers := min(runtime.GOMAXPROCS(0), len(texts)/32)
	if workers <= 1 {
		for i := range texts {
			if i%64 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			one(i)
		}
		return out, nil
	}
	var wg sync.WaitGroup
	chunk := (len(texts) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min(len(texts), (w+1)*chunk)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if (i-lo)%64 == 0 && ctx.Err() != nil {
					return
				}
				one(i)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
