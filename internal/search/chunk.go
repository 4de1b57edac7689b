package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cidx/cidx/internal/index"
)

// Chunk is get_file_chunk's answer.
type Chunk struct {
	ID             string          `json:"id"`
	FilePath       string          `json:"file_path"`
	FileVersionID  string          `json:"file_version_id" jsonschema:"git blob id of the file the chunk was cut from"`
	Index          int             `json:"index" jsonschema:"zero-based position of the chunk in its file"`
	Content        string          `json:"content"`
	StartOffset    int             `json:"start_offset" jsonschema:"byte offset where the chunk starts (inclusive)"`
	EndOffset      int             `json:"end_offset" jsonschema:"byte offset where it ends (exclusive)"`
	StartLine      int             `json:"start_line"`
	EndLine        int             `json:"end_line"`
	Language       string          `json:"language"`
	Kind           string          `json:"kind"`
	Symbol         string          `json:"symbol"`
	TokenCount     int             `json:"token_count"`
	SourceChecksum string          `json:"source_checksum" jsonschema:"hash of the chunk's content"`
	CreatedAt      string          `json:"created_at"`
	Commit         string          `json:"commit"`
	Embedding      *EmbeddingState `json:"embedding"`
}

// EmbeddingState says whether a chunk has a usable vector.
type EmbeddingState struct {
	ID     string `json:"id"`
	Model  string `json:"model"`
	Status string `json:"status" jsonschema:"ready, stale (embedded by another embedder than the configured one) or missing"`
}

// Chunk returns one chunk by id; withEmbedding adds its embedding state.
func (s *Service) Chunk(ctx context.Context, alias, id string, withEmbedding bool) (*Chunk, error) {
	ts, _, err := s.open(ctx, []string{alias}, false)
	if err != nil {
		return nil, err
	}
	defer release(ts)
	t := ts[0]
	c, err := t.reader.ChunkByID(ctx, strings.TrimSpace(id))
	if errors.Is(err, index.ErrNoChunk) {
		return nil, &Error{Message: fmt.Sprintf("chunk %q not found in %s at %.12s", id, t.alias, t.reader.Commit),
			Hint: "chunk ids come from search_code results and change when the file changes; search again"}
	}
	if err != nil {
		return nil, err
	}
	body, err := s.bytesOf(t.base, t.reader.Commit, c.Path, c.StartOffset, c.EndOffset)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", c.Path, err)
	}
	out := &Chunk{ID: c.ID, FilePath: c.Path, FileVersionID: c.Blob, Index: c.Index, Content: string(body),
		StartOffset: c.StartOffset, EndOffset: c.EndOffset, StartLine: c.StartLine, EndLine: c.EndLine, Language: c.Language, Kind: c.Kind,
		Symbol: c.Symbol, TokenCount: c.TokenCount, SourceChecksum: c.ContentHash, CreatedAt: c.CreatedAt, Commit: t.reader.Commit}
	if withEmbedding {
		st := &EmbeddingState{ID: c.ContentHash, Model: t.reader.Embedder, Status: "missing"}
		switch {
		case !t.reader.HasVector(c.Rowid):
		case t.reader.Embedder != s.idx.Embedder().ID():
			st.Status = "stale"
		default:
			st.Status = "ready"
		}
		out.Embedding = st
	}
	return out, nil
}
