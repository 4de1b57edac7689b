package embed

import (
	"context"
	"sync"
)

// lazyBuiltin decodes the builtin model (about 30 MB of vectors) on first
// use, so that a server that has nothing to embed or search stays small.
type lazyBuiltin struct {
	once sync.Once
	b    *Builtin
	err  error
}

func (l *lazyBuiltin) get() (*Builtin, error) {
	l.once.Do(func() { l.b, l.err = NewBuiltin() })
	return l.b, l.err
}

// ID loads the model; a model that cannot load has no usable identity.
func (l *lazyBuiltin) ID() string {
	if b, err := l.get(); err == nil {
		return b.ID()
	}
	return "builtin:unavailable"
}

func (l *lazyBuiltin) Dim() int {
	if b, err := l.get(); err == nil {
		return b.Dim()
	}
	return 0
}

func (l *lazyBuiltin) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	b, err := l.get()
	if err != nil {
		return nil, err
	}
	return b.Embed(ctx, texts, kind)
}
