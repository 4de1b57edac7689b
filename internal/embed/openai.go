package embed

import (
	"fmt"
	"strings"
)

// knownDims are the native vector sizes of well-known models, used when
// Config.Dimensions is zero.
var knownDims = map[string]int{
	// OpenAI
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
	// Common local models (Ollama names, Hugging Face names)
	"nomic-embed-text":                       768,
	"nomic-ai/nomic-embed-text-v1.5":         768,
	"nomic-embed-code":                       3584,
	"mxbai-embed-large":                      1024,
	"mixedbread-ai/mxbai-embed-large-v1":     1024,
	"all-minilm":                             384,
	"sentence-transformers/all-MiniLM-L6-v2": 384,
	"bge-m3":                                 1024,
	"BAAI/bge-m3":                            1024,
	"bge-large":                              1024,
	"BAAI/bge-small-en-v1.5":                 384,
	"BAAI/bge-base-en-v1.5":                  768,
	"BAAI/bge-large-en-v1.5":                 1024,
	"snowflake-arctic-embed":                 1024,
	"snowflake-arctic-embed2":                1024,
	"jina/jina-embeddings-v2-base-code":      768,
	"jinaai/jina-embeddings-v2-base-code":    768,
	// VoyageAI
	"voyage-code-3":         1024,
	"voyage-code-2":         1536,
	"voyage-3":              1024,
	"voyage-3-large":        1024,
	"voyage-3-lite":         512,
	"voyage-3.5":            1024,
	"voyage-3.5-lite":       1024,
	"voyage-2":              1024,
	"voyage-large-2":        1536,
	"voyage-multilingual-2": 1024,
	"voyage-law-2":          1024,
	"voyage-finance-2":      1024,
}

// modelDim returns the vector size for model: Config.Dimensions if set,
// else the model's known size (also without an Ollama ":tag").
func modelDim(provider, model string, dims int) (int, error) {
	if dims < 0 {
		return 0, fmt.Errorf("embed: %s: negative dimensions", provider)
	}
	if dims > 0 {
		return dims, nil
	}
	if d, ok := knownDims[model]; ok {
		return d, nil
	}
	if i := strings.LastIndexByte(model, ':'); i > 0 {
		if d, ok := knownDims[model[:i]]; ok {
			return d, nil
		}
	}
	return 0, fmt.Errorf("embed: %s: unknown vector size of model %q; set Dimensions to the size the server returns", provider, model)
}

// openaiRequest is the body of POST /v1/embeddings.
type openaiRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

// newOpenAI returns a client for an OpenAI-compatible /v1/embeddings
// endpoint. Kind is not sent (the API has no such field).
func newOpenAI(c Config) (Embedder, error) {
	if c.Model == "" {
		c.Model = "text-embedding-3-small"
	}
	dim, err := modelDim("openai", c.Model, c.Dimensions)
	if err != nil {
		return nil, err
	}
	// Only OpenAI's text-embedding-3 models take "dimensions"; other
	// servers may reject it, so for them Dimensions is only checked.
	send := 0
	if strings.HasPrefix(c.Model, "text-embedding-3") && c.Dimensions > 0 {
		send = c.Dimensions
	}
	c.Dimensions = dim
	r, err := newRemote("openai", c, "https://api.openai.com")
	if err != nil {
		return nil, err
	}
	r.body = func(texts []string, _ Kind) any {
		return openaiRequest{Model: r.model, Input: texts, EncodingFormat: "float", Dimensions: send}
	}
	return r, nil
}
