package embed

// The hosted embedding APIs (OpenAI, VoyageAI) cannot be reached from
// tests. The httptest servers below stand in for them: each speaks the
// documented wire format of POST /v1/embeddings (OpenAI API reference;
// docs.voyageai.com/reference/embeddings-api) and misbehaves in the ways
// real servers do (429 with Retry-After, 5xx, dropped connections, slow
// responses, out-of-order "index" fields, error bodies that echo the key).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testKey = "sk-test-0123456789abcdef"

// fakeRequest is the union of the OpenAI and Voyage request bodies.
type fakeRequest struct {
	Model           string   `json:"model"`
	Input           []string `json:"input"`
	EncodingFormat  string   `json:"encoding_format"`
	Dimensions      *int     `json:"dimensions"`
	InputType       *string  `json:"input_type"`
	OutputDimension *int     `json:"output_dimension"`
	Truncation      *bool    `json:"truncation"`
}

// fakeVector is a deterministic, unnormalised vector for text.
func fakeVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(len(text)%7+1) * float32(i+1)
	}
	return v
}

type fakeServer struct {
	*httptest.Server
	t        *testing.T
	dim      int
	requests atomic.Int32
	mu       sync.Mutex
	bodies   []fakeRequest
	// hook may write its own response and return true.
	hook func(n int32, w http.ResponseWriter, r *http.Request, req fakeRequest) bool
	// reverse returns the data array in reverse order.
	reverse bool
}

func newFakeServer(t *testing.T, dim int) *fakeServer {
	f := &fakeServer{t: t, dim: dim}
	f.Server = httptest.NewServer(http.HandlerFunc(f.handle))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) handle(w http.ResponseWriter, r *http.Request) {
	n := f.requests.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		http.Error(w, "bad content type "+ct, http.StatusBadRequest)
		return
	}
	var req fakeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, req)
	f.mu.Unlock()
	if f.hook != nil && f.hook(n, w, r, req) {
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Object string         `json:"object"`
		Data   []item         `json:"data"`
		Model  string         `json:"model"`
		Usage  map[string]int `json:"usage"`
	}{Object: "list", Model: req.Model, Usage: map[string]int{"total_tokens": len(req.Input)}}
	for i, in := range req.Input {
		resp.Data = append(resp.Data, item{"embedding", i, fakeVector(in, f.dim)})
	}
	if f.reverse {
		for i, j := 0, len(resp.Data)-1; i < j; i, j = i+1, j-1 {
			resp.Data[i], resp.Data[j] = resp.Data[j], resp.Data[i]
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d %s", i, strings.Repeat("x", i%5))
	}
	return out
}

// fast makes retries immediate for tests.
func fast(e Embedder) Embedder {
	r := e.(*remote)
	r.backoff = time.Millisecond
	r.maxBackoff = 5 * time.Second
	return e
}

func checkVectors(t *testing.T, in []string, out [][]float32, dim int) {
	t.Helper()
	if len(out) != len(in) {
		t.Fatalf("%d vectors for %d texts", len(out), len(in))
	}
	for i, v := range out {
		if len(v) != dim {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		want := fakeVector(in[i], dim)
		normalize(want)
		var n float64
		for j := range v {
			n += float64(v[j]) * float64(v[j])
			if math.Abs(float64(v[j]-want[j])) > 1e-6 {
				t.Fatalf("vector %d is not the server's vector for its text", i)
			}
		}
		if math.Abs(n-1) > 1e-5 {
			t.Fatalf("vector %d not normalised: |v|^2 = %v", i, n)
		}
	}
}

func TestOpenAIWireFormat(t *testing.T) {
	f := newFakeServer(t, 8)
	f.hook = func(_ int32, w http.ResponseWriter, r *http.Request, req fakeRequest) bool {
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			http.Error(w, "bad auth", http.StatusUnauthorized)
			return true
		}
		if req.Model != "nomic-embed-text" || req.EncodingFormat != "float" || req.Dimensions != nil || req.InputType != nil {
			http.Error(w, fmt.Sprintf("bad body %+v", req), http.StatusBadRequest)
			return true
		}
		return false
	}
	for _, u := range []string{f.URL, f.URL + "/", f.URL + "/v1", f.URL + "/v1/embeddings"} {
		e, err := New(Config{Provider: "openai", URL: u, Model: "nomic-embed-text", APIKey: testKey, Dimensions: 8})
		if err != nil {
			t.Fatal(err)
		}
		in := texts(5)
		out, err := e.Embed(context.Background(), in, Document)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		checkVectors(t, in, out, 8)
		if e.ID() != "openai:nomic-embed-text:8" || e.Dim() != 8 {
			t.Fatalf("ID %q Dim %d", e.ID(), e.Dim())
		}
	}
}

func TestOpenAINoKeyAndKnownModel(t *testing.T) {
	f := newFakeServer(t, 768)
	f.hook = func(_ int32, w http.ResponseWriter, r *http.Request, _ fakeRequest) bool {
		if _, ok := r.Header["Authorization"]; ok {
			http.Error(w, "unexpected auth header", http.StatusBadRequest)
			return true
		}
		return false
	}
	// A local server (Ollama-style model name with a tag) needs no key, and
	// the size of a well-known model needs no configuration.
	e, err := New(Config{Provider: "openai", URL: f.URL, Model: "nomic-embed-text:latest"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 768 {
		t.Fatalf("dim %d", e.Dim())
	}
	in := []string{"", "a", "  "}
	out, err := e.Embed(context.Background(), in, Query)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatal(len(out))
	}
	for _, b := range f.bodies {
		for _, s := range b.Input {
			if s == "" {
				t.Fatal("empty input sent")
			}
		}
	}
}

func TestOpenAIDimensionsParameter(t *testing.T) {
	f := newFakeServer(t, 256)
	e, err := New(Config{Provider: "openai", URL: f.URL, Model: "text-embedding-3-small", APIKey: testKey, Dimensions: 256})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), texts(2), Document); err != nil {
		t.Fatal(err)
	}
	if d := f.bodies[0].Dimensions; d == nil || *d != 256 {
		t.Fatalf("dimensions not sent: %v", d)
	}
	if e.ID() != "openai:text-embedding-3-small:256" {
		t.Fatal(e.ID())
	}
	e2, _ := New(Config{Provider: "openai"})
	if e2.ID() != "openai:text-embedding-3-small:1536" {
		t.Fatal(e2.ID())
	}
}

func TestBatchingAndBoundedConcurrency(t *testing.T) {
	f := newFakeServer(t, 4)
	var inFlight, maxInFlight atomic.Int32
	f.hook = func(_ int32, _ http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
		n := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		return false
	}
	e, err := New(Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, BatchSize: 10, Concurrency: 3})
	if err != nil {
		t.Fatal(err)
	}
	in := texts(95)
	out, err := e.Embed(context.Background(), in, Document)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 4)
	if got := f.requests.Load(); got != 10 {
		t.Fatalf("%d requests, want 10", got)
	}
	for _, b := range f.bodies {
		if len(b.Input) > 10 {
			t.Fatalf("batch of %d", len(b.Input))
		}
	}
	if m := maxInFlight.Load(); m > 3 || m < 2 {
		t.Fatalf("max in flight %d, want 2..3", m)
	}
	// The bound holds across concurrent Embed calls.
	maxInFlight.Store(0)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Embed(context.Background(), texts(40), Query); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if m := maxInFlight.Load(); m > 3 {
		t.Fatalf("max in flight %d across calls, want <= 3", m)
	}
	// Default batch size.
	e2, _ := New(Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4})
	f.requests.Store(0)
	if _, err := e2.Embed(context.Background(), texts(130), Document); err != nil {
		t.Fatal(err)
	}
	if got := f.requests.Load(); got != 3 {
		t.Fatalf("%d requests for 130 texts, want 3", got)
	}
}

func TestRetry429TwiceThenSuccess(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(n int32, w http.ResponseWriter, _ *http.Request, _ fakeRequest) bool {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`, http.StatusTooManyRequests)
			return true
		case 2:
			http.Error(w, `{"error":{"message":"Rate limit reached"}}`, http.StatusTooManyRequests)
			return true
		}
		return false
	}
	e := fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, APIKey: testKey}))
	start := time.Now()
	in := texts(3)
	out, err := e.Embed(context.Background(), in, Document)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 4)
	if got := f.requests.Load(); got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("Retry-After: 1 not honoured (%v)", el)
	}
}

func TestRetry5xxAndDroppedConnection(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(n int32, w http.ResponseWriter, _ *http.Request, _ fakeRequest) bool {
		switch n {
		case 1:
			http.Error(w, "upstream exploded", http.StatusBadGateway)
			return true
		case 2:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		}
		return false
	}
	e := fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4}))
	in := texts(2)
	out, err := e.Embed(context.Background(), in, Document)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 4)
	if got := f.requests.Load(); got != 3 {
		t.Fatalf("%d requests, want 3", got)
	}
}

func TestPerRequestTimeoutIsRetried(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(n int32, _ http.ResponseWriter, r *http.Request, _ fakeRequest) bool {
		if n == 1 {
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
		}
		return false
	}
	e := fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, Timeout: 100 * time.Millisecond}))
	in := texts(2)
	out, err := e.Embed(context.Background(), in, Document)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 4)
}

func TestRetriesExhausted(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(_ int32, w http.ResponseWriter, _ *http.Request, _ fakeRequest) bool {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return true
	}
	e := fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, MaxRetries: 2}))
	_, err := e.Embed(context.Background(), texts(1), Document)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 503 || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err = %v", err)
	}
	if got := f.requests.Load(); got != 3 {
		t.Fatalf("%d requests, want 3 (1 + 2 retries)", got)
	}
	// Negative MaxRetries: no retry at all.
	f.requests.Store(0)
	e = fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, MaxRetries: -1}))
	if _, err := e.Embed(context.Background(), texts(1), Document); err == nil {
		t.Fatal("no error")
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("%d requests, want 1", got)
	}
}

func TestOutOfOrderIndexes(t *testing.T) {
	f := newFakeServer(t, 6)
	f.reverse = true
	e := mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 6})
	in := texts(7)
	out, err := e.Embed(context.Background(), in, Document)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 6)
}

func TestBadResponses(t *testing.T) {
	for name, hook := range map[string]func(n int32, w http.ResponseWriter, r *http.Request, req fakeRequest) bool{
		"dimension": func(_ int32, w http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
			fmt.Fprintf(w, `{"data":[{"index":0,"embedding":[1,2,3]},{"index":1,"embedding":[1,2,3]}]}`)
			return true
		},
		"count": func(_ int32, w http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
			fmt.Fprintf(w, `{"data":[]}`)
			return true
		},
		"repeated index": func(_ int32, w http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
			fmt.Fprintf(w, `{"data":[{"index":0,"embedding":[1,2,3,4]},{"index":0,"embedding":[1,2,3,4]}]}`)
			return true
		},
		"zero vector": func(_ int32, w http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
			fmt.Fprintf(w, `{"data":[{"index":0,"embedding":[0,0,0,0]},{"index":1,"embedding":[1,2,3,4]}]}`)
			return true
		},
		"not json": func(_ int32, w http.ResponseWriter, _ *http.Request, req fakeRequest) bool {
			fmt.Fprintf(w, `<html>`)
			return true
		},
	} {
		f := newFakeServer(t, 4)
		f.hook = hook
		e := mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4})
		_, err := e.Embed(context.Background(), texts(2), Document)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if name == "dimension" && !errors.Is(err, ErrDimension) {
			t.Errorf("dimension: %v", err)
		}
		if got := f.requests.Load(); got != 1 {
			t.Errorf("%s: %d requests (a malformed response is not retried)", name, got)
		}
	}
}

func TestKeyNeverInErrors(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(_ int32, w http.ResponseWriter, r *http.Request, _ fakeRequest) bool {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. Header was: Bearer %s","type":"invalid_request_error"}}`, key, key)
		return true
	}
	e := fast(mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4, APIKey: testKey}))
	_, err := e.Embed(context.Background(), texts(1), Document)
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testKey) {
		t.Fatalf("key leaked: %v", err)
	}
	if !strings.Contains(err.Error(), "[REDACTED]") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v", err)
	}
	if got := f.requests.Load(); got != 1 {
		t.Fatalf("401 retried: %d requests", got)
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		if strings.Contains(u.Error(), testKey) {
			t.Fatalf("key leaked through a wrapped error: %v", u)
		}
	}
	// Voyage-style {"detail": ...} bodies, and the key in a network error
	// (here: in the URL of a server that is gone).
	v := newFakeServer(t, 4)
	v.hook = func(_ int32, w http.ResponseWriter, r *http.Request, _ fakeRequest) bool {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"detail":"Provided API key %s is invalid."}`, testKey)
		return true
	}
	ev := mustNew(t, Config{Provider: "voyage", URL: v.URL, APIKey: testKey})
	_, err = ev.Embed(context.Background(), texts(1), Query)
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[REDACTED] is invalid") {
		t.Fatalf("voyage err = %v", err)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	eg := fast(mustNew(t, Config{Provider: "openai", URL: gone.URL + "/" + testKey, Model: "m", Dimensions: 4, APIKey: testKey, MaxRetries: 1}))
	_, err = eg.Embed(context.Background(), texts(1), Document)
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("network err = %v", err)
	}
}

func TestCancel(t *testing.T) {
	f := newFakeServer(t, 4)
	f.hook = func(_ int32, w http.ResponseWriter, _ *http.Request, _ fakeRequest) bool {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "busy", http.StatusTooManyRequests)
		return true
	}
	e := mustNew(t, Config{Provider: "openai", URL: f.URL, Model: "m", Dimensions: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.Embed(ctx, texts(200), Document)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("cancellation not honoured")
	}
}

func TestVoyageWireFormat(t *testing.T) {
	f := newFakeServer(t, 512)
	f.hook = func(_ int32, w http.ResponseWriter, r *http.Request, req fakeRequest) bool {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, `{"detail":"unauthorized"}`, http.StatusUnauthorized)
			return true
		}
		if req.Model != "voyage-code-3" || req.InputType == nil || req.OutputDimension == nil || *req.OutputDimension != 512 || req.Truncation == nil {
			http.Error(w, fmt.Sprintf(`{"detail":"bad body %+v"}`, req), http.StatusBadRequest)
			return true
		}
		return false
	}
	e, err := New(Config{Provider: "voyage", URL: f.URL, APIKey: testKey, Dimensions: 512, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID() != "voyage:voyage-code-3:512" {
		t.Fatal(e.ID())
	}
	in := texts(3)
	out, err := e.Embed(context.Background(), in, Query)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, out, 512)
	if _, err := e.Embed(context.Background(), in[:1], Document); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, b := range f.bodies {
		types = append(types, *b.InputType)
	}
	if strings.Join(types, ",") != "query,query,document" {
		t.Fatalf("input types %v", types)
	}
	// Defaults: voyage-code-3 at 1024, output_dimension omitted.
	e2 := mustNew(t, Config{Provider: "voyage", APIKey: testKey})
	if e2.ID() != "voyage:voyage-code-3:1024" || e2.(*remote).endpoint != "https://api.voyageai.com/v1/embeddings" {
		t.Fatal(e2.ID(), e2.(*remote).endpoint)
	}
	if _, err := New(Config{Provider: "voyage"}); err == nil {
		t.Fatal("voyage without key accepted")
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []Config{
		{Provider: "nope"},
		{Provider: "openai", Model: "some-unknown-model"},
		{Provider: "openai", URL: "ftp://x", Model: "m", Dimensions: 3},
		{Provider: "builtin", Dimensions: 7},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
	e := mustNew(t, Config{Provider: "openai", URL: "http://localhost:11434", Model: "some-model", Dimensions: 1024})
	if got := e.(*remote).endpoint; got != "http://localhost:11434/v1/embeddings" {
		t.Fatal(got)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After", "2")
	if d := retryAfter(h); d != 2*time.Second {
		t.Fatal(d)
	}
	h.Set("Retry-After", time.Now().Add(3*time.Second).UTC().Format(http.TimeFormat))
	if d := retryAfter(h); d < time.Second || d > 4*time.Second {
		t.Fatal(d)
	}
	h.Set("Retry-After-Ms", "250")
	if d := retryAfter(h); d != 250*time.Millisecond {
		t.Fatal(d)
	}
	r := &remote{backoff: 100 * time.Millisecond, maxBackoff: time.Second}
	for a := 0; a < 10; a++ {
		d := r.delay(a, 0)
		want := min(100*time.Millisecond<<a, time.Second)
		if d < want/2 || d > want {
			t.Fatalf("attempt %d: delay %v, want in [%v, %v]", a, d, want/2, want)
		}
	}
	if d := r.delay(0, 10*time.Second); d != time.Second {
		t.Fatalf("Retry-After not capped: %v", d)
	}
}

func mustNew(t *testing.T, c Config) Embedder {
	t.Helper()
	e, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
