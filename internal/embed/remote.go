package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// remote is the transport shared by the HTTP providers: batching, bounded
// concurrency, retries, timeouts, ordering, dimension checks and key
// redaction. A provider supplies the request body for a batch and decodes
// the response.
type remote struct {
	provider    string // "openai" or "voyage", for IDs and errors
	endpoint    string
	model       string
	apiKey      string
	dim         int
	batchSize   int
	concurrency int
	maxRetries  int
	timeout     time.Duration
	client      *http.Client
	sem         chan struct{} // bounds requests in flight across all Embed calls
	// body returns the JSON request for a batch.
	body func(texts []string, kind Kind) any
	// backoff is the first retry delay; doubled per attempt, capped at
	// maxBackoff, with full jitter. Tests shorten it.
	backoff, maxBackoff time.Duration
}

func newRemote(provider string, c Config, defaultURL string) (*remote, error) {
	u := strings.TrimSpace(c.URL)
	if u == "" {
		u = defaultURL
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("embed: %s: URL must start with http:// or https://", provider)
	}
	r := &remote{
		provider:    provider,
		endpoint:    embeddingsURL(u),
		model:       c.Model,
		apiKey:      c.APIKey,
		dim:         c.Dimensions,
		batchSize:   c.BatchSize,
		concurrency: c.Concurrency,
		maxRetries:  c.MaxRetries,
		timeout:     c.Timeout,
		client:      &http.Client{},
		backoff:     500 * time.Millisecond,
		maxBackoff:  30 * time.Second,
	}
	if r.batchSize <= 0 {
		r.batchSize = DefaultBatchSize
	}
	if r.concurrency <= 0 {
		r.concurrency = DefaultConcurrency
	}
	switch {
	case r.maxRetries == 0:
		r.maxRetries = DefaultMaxRetries
	case r.maxRetries < 0:
		r.maxRetries = 0
	}
	if r.timeout <= 0 {
		r.timeout = DefaultTimeout
	}
	r.sem = make(chan struct{}, r.concurrency)
	return r, nil
}

// embeddingsURL appends the endpoint path to a base URL unless present.
func embeddingsURL(base string) string {
	u := strings.TrimRight(base, "/")
	switch {
	case strings.HasSuffix(u, "/embeddings"):
		return u
	case strings.HasSuffix(u, "/v1"):
		return u + "/embeddings"
	}
	return u + "/v1/embeddings"
}

func (r *remote) ID() string { return r.provider + ":" + r.model + ":" + strconv.Itoa(r.dim) }

func (r *remote) Dim() int { return r.dim }

// Embed splits texts into batches and sends them with bounded concurrency:
// at most Concurrency requests are in flight per embedder, however many
// Embed calls run at once.
func (r *remote) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct{ start, end int }
	jobs := make(chan job)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	workers := min(r.concurrency, (len(texts)+r.batchSize-1)/r.batchSize)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				vecs, err := r.embedBatch(ctx, texts[j.start:j.end], kind)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					continue
				}
				copy(out[j.start:j.end], vecs)
			}
		}()
	}
send:
	for start := 0; start < len(texts); start += r.batchSize {
		select {
		case jobs <- job{start, min(len(texts), start+r.batchSize)}:
		case <-ctx.Done():
			break send
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// embeddingResponse is the response shape shared by OpenAI and Voyage.
type embeddingResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embedBatch sends one batch, retrying transient failures.
func (r *remote) embedBatch(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	inputs := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			t = " " // servers reject empty strings
		}
		inputs[i] = t
	}
	payload, err := json.Marshal(r.body(inputs, kind))
	if err != nil {
		return nil, fmt.Errorf("embed: %s: encode request: %w", r.provider, err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := r.try(ctx, payload, len(texts))
		if err == nil {
			return vecs, nil
		}
		var te *transientError
		if !errors.As(err, &te) || attempt >= r.maxRetries || ctx.Err() != nil {
			if te != nil {
				err = te.err
			}
			if attempt > 0 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		delay := r.delay(attempt, retryAfter)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// delay is the wait before retry number attempt+1: the server's
// Retry-After when given (capped at maxBackoff), else exponential backoff
// with full jitter.
func (r *remote) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, r.maxBackoff)
	}
	d := r.backoff << min(attempt, 16)
	if d > r.maxBackoff || d <= 0 {
		d = r.maxBackoff
	}
	// Full jitter in [d/2, d].
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// transientError marks a failure worth retrying.
type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// StatusError is an HTTP error response from an embedding server. Its
// message never contains the API key.
type StatusError struct {
	Provider string
	Code     int
	Message  string // the server's error message, redacted and truncated
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("embed: %s: HTTP %d %s", e.Provider, e.Code, http.StatusText(e.Code))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// try makes one request. It returns a *transientError for failures worth
// retrying, with the server's Retry-After if any.
func (r *remote) try(parent context.Context, payload []byte, n int) ([][]float32, time.Duration, error) {
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	case <-parent.Done():
		return nil, 0, fmt.Errorf("embed: %s: %w", r.provider, parent.Err())
	}
	ctx, cancel := context.WithTimeout(parent, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(payload))
	if err != nil {
		return nil, 0, fmt.Errorf("embed: %s: %s", r.provider, r.redact(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		if perr := parent.Err(); perr != nil {
			return nil, 0, fmt.Errorf("embed: %s: %w", r.provider, perr)
		}
		// Network error or per-request timeout: retry. The message is
		// rebuilt rather than wrapped so the key can never leak through it.
		return nil, 0, &transientError{fmt.Errorf("embed: %s: request failed: %s", r.provider, r.redact(err.Error()))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, &transientError{fmt.Errorf("embed: %s: reading response: %s", r.provider, r.redact(err.Error()))}
	}
	if resp.StatusCode/100 != 2 {
		se := &StatusError{Provider: r.provider, Code: resp.StatusCode, Message: r.errorMessage(body)}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, retryAfter(resp.Header), &transientError{se}
		}
		return nil, 0, se
	}
	var er embeddingResponse
	if err := json.Unmarshal(body, &er); err != nil {
		return nil, 0, fmt.Errorf("embed: %s: decoding response: %s", r.provider, r.redact(err.Error()))
	}
	if len(er.Data) != n {
		return nil, 0, fmt.Errorf("embed: %s: got %d embeddings for %d inputs", r.provider, len(er.Data), n)
	}
	out := make([][]float32, n)
	for _, d := range er.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, 0, fmt.Errorf("embed: %s: bad or repeated index %d in response", r.provider, d.Index)
		}
		if len(d.Embedding) != r.dim {
			return nil, 0, fmt.Errorf("%w: %s model %s returned %d, want %d (set Dimensions to the model's size)", ErrDimension, r.provider, r.model, len(d.Embedding), r.dim)
		}
		if !normalize(d.Embedding) {
			return nil, 0, fmt.Errorf("embed: %s: zero or non-finite vector for input %d", r.provider, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}

// errorMessage extracts a short, redacted message from an error body:
// OpenAI's {"error":{"message"}}, Voyage's {"detail"}, or the raw text.
func (r *remote) errorMessage(body []byte) string {
	var e struct {
		Error  json.RawMessage `json:"error"`
		Detail json.RawMessage `json:"detail"`
	}
	msg := ""
	if json.Unmarshal(body, &e) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(e.Error, &inner) == nil && inner.Message != "":
			msg = inner.Message
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			msg = s
		case json.Unmarshal(e.Detail, &s) == nil && s != "":
			msg = s
		case len(e.Detail) > 0:
			msg = string(e.Detail)
		}
	}
	if msg == "" {
		msg = string(body)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(r.apiKey) < 4 && r.apiKey != "" {
		// Too short to redact reliably without mangling the message.
		return ""
	}
	msg = r.redact(msg)
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

// redact replaces the API key in s.
func (r *remote) redact(s string) string {
	if r.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, r.apiKey, "[REDACTED]")
}

// retryAfter parses Retry-After (seconds or an HTTP date) or retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return time.Millisecond // "retry now", but not a zero (= unset) delay
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), time.Millisecond)
	}
	return 0
}
