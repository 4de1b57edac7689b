package embed

import "errors"

// voyageRequest is the body of VoyageAI's POST /v1/embeddings.
type voyageRequest struct {
	Model           string   `json:"model"`
	Input           []string `json:"input"`
	InputType       string   `json:"input_type"`
	Truncation      bool     `json:"truncation"`
	OutputDimension int      `json:"output_dimension,omitempty"`
}

// newVoyage returns a VoyageAI client: input_type is "document" or
// "query" from Kind, Dimensions is sent as output_dimension, long inputs
// are truncated by the server.
func newVoyage(c Config) (Embedder, error) {
	if c.APIKey == "" {
		return nil, errors.New("embed: voyage: APIKey is required")
	}
	if c.Model == "" {
		c.Model = "voyage-code-3"
	}
	send := c.Dimensions
	dim, err := modelDim("voyage", c.Model, c.Dimensions)
	if err != nil {
		return nil, err
	}
	c.Dimensions = dim
	r, err := newRemote("voyage", c, "https://api.voyageai.com")
	if err != nil {
		return nil, err
	}
	r.body = func(texts []string, kind Kind) any {
		return voyageRequest{Model: r.model, Input: texts, InputType: kind.String(), Truncation: true, OutputDimension: send}
	}
	return r, nil
}
