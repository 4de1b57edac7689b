// Package embed turns text into vectors for semantic search.
//
// Three providers implement Embedder:
//
//   - builtin (the default): an offline embedder shipped inside the binary,
//     so semantic search works on a fresh machine with no network. It
//     pools trained token vectors (see Builtin and internal/embed/tokvec).
//   - openai: any server speaking OpenAI's POST /v1/embeddings — OpenAI
//     itself, Ollama, vLLM, LM Studio, llama.cpp's llama-server, Hugging
//     Face TEI.
//   - voyage: VoyageAI's POST /v1/embeddings, with input_type set from Kind.
//
// Every Embedder returns one L2-normalised vector per input text, in input
// order, and has a stable ID recorded with an index: when the ID changes the
// index must be re-embedded.
//
// The remote providers batch inputs (BatchSize), send batches with bounded
// concurrency (Concurrency), retry 429, 5xx and network errors with
// exponential backoff and jitter, honouring Retry-After (MaxRetries), give
// each request its own deadline (Timeout), order results by the "index"
// field and check dimensions. API keys are sent only in the Authorization
// header; they never appear in an error (a server that echoes the key gets
// it replaced with [REDACTED]) and are never logged.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Kind says what a text is for. Voyage sends it as input_type; the builtin
// embedder pools queries and documents differently.
type Kind int

const (
	// Document is text to be indexed (a chunk of code or prose).
	Document Kind = iota
	// Query is a search query.
	Query
)

// String returns "document" or "query".
func (k Kind) String() string {
	if k == Query {
		return "query"
	}
	return "document"
}

// Embedder turns texts into vectors.
type Embedder interface {
	// ID is the embedder's stable identity, recorded with an index, e.g.
	// "builtin:code-v1-a07486e5:256", "openai:text-embedding-3-small:1536",
	// "voyage:voyage-code-3:1024". A different model or dimension gives a
	// different ID, which triggers re-embedding.
	ID() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one L2-normalised vector per text, in the same order.
	Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error)
}

// Config selects and configures an embedder.
type Config struct {
	// Provider is "builtin" (the default when empty), "openai" (any
	// OpenAI-compatible server) or "voyage".
	Provider string
	// URL is the server's base URL; "/v1/embeddings" is appended unless the
	// URL already ends with it, and "/embeddings" if it ends with "/v1".
	// Defaults: https://api.openai.com and https://api.voyageai.com.
	URL string
	// Model is the model name. Defaults: text-embedding-3-small (openai),
	// voyage-code-3 (voyage).
	Model string
	// APIKey is sent as "Authorization: Bearer <key>". Optional for openai
	// (local servers), required for voyage.
	APIKey string
	// Dimensions is the vector size. For OpenAI's text-embedding-3 models
	// it is sent as "dimensions" (shortened embeddings) and for Voyage as
	// "output_dimension". For other models it only states the size the
	// server returns; it is required when the model is not in the table of
	// well-known models. The builtin embedder accepts 0 or its own size.
	Dimensions int
	// BatchSize is the number of texts per request (default 64).
	BatchSize int
	// Concurrency is the number of requests in flight (default 4).
	Concurrency int
	// MaxRetries is the number of retries of a failed request after the
	// first attempt (default 4; negative: none).
	MaxRetries int
	// Timeout bounds each HTTP request, retries excluded (default 60s).
	Timeout time.Duration
}

// Defaults for Config fields left zero.
const (
	DefaultBatchSize   = 64
	DefaultConcurrency = 4
	DefaultMaxRetries  = 4
	DefaultTimeout     = 60 * time.Second
)

// New returns the embedder c describes.
func New(c Config) (Embedder, error) {
	switch strings.ToLower(strings.TrimSpace(c.Provider)) {
	case "", "builtin":
		if c.Dimensions != 0 {
			return nil, fmt.Errorf("embed: the builtin embedder's dimensions are fixed; leave dimensions unset")
		}
		return &lazyBuiltin{}, nil
	case "openai":
		return newOpenAI(c)
	case "voyage", "voyageai":
		return newVoyage(c)
	}
	return nil, fmt.Errorf("embed: unknown provider %q (want builtin, openai or voyage)", c.Provider)
}

// ErrDimension reports a vector of the wrong size from a server.
var ErrDimension = errors.New("embed: unexpected vector dimension")

// normalize scales v to unit length in place. It reports false for a zero
// or non-finite vector.
func normalize(v []float32) bool {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
