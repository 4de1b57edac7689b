// Command filecontent measures get_file_content over HTTP on loopback: it
// starts the cidx binary on a fresh data directory with one repository,
// records the idle server's memory, then drives 1 and 32 concurrent clients
// for a fixed time and prints calls per second and latency percentiles.
//
// The default load generator replays, with plain HTTP and a fresh JSON-RPC
// id per call, the exact stateless (2026-07-28) tools/call request the
// go-sdk client sends; it is light, so the server gets the machine's
// cores. -load sdk drives real go-sdk client sessions instead.
//
//	go build -o bin/cidx ./cmd/cidx && go run ./bench/filecontent [-duration 10s] [-file PATH] [-load raw|sdk]
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type options struct {
	bin, repo, file, levels, protocol, pprof, load string
	duration                                       time.Duration
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "bin/cidx", "cidx binary")
	flag.StringVar(&o.repo, "repo", ".", "git repository to serve")
	flag.StringVar(&o.file, "file", "internal/mcp/registry.go", "file to read, relative to the repository")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "how long each concurrency level runs")
	flag.StringVar(&o.levels, "clients", "1,32", "comma-separated numbers of concurrent clients")
	flag.StringVar(&o.protocol, "protocol", "", "MCP protocol version the clients ask for (default: the client's latest, 2026-07-28, stateless)")
	flag.StringVar(&o.pprof, "pprof", "", "pass --pprof ADDR to the server, to profile it while the load runs")
	flag.StringVar(&o.load, "load", "raw", "raw: replay the recorded request with plain HTTP; sdk: one go-sdk client session per worker")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// bearer adds the token and keeps a copy of the last tools/call request so
// that the raw load can replay exactly what the go-sdk client sends.
type bearer struct {
	token string
	next  http.RoundTripper
	rec   *recorded
}

type recorded struct {
	mu     sync.Mutex
	header http.Header
	body   []byte
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.rec != nil && r.Body != nil && r.Header.Get("Mcp-Method") == "tools/call" {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		b.rec.mu.Lock()
		b.rec.header, b.rec.body = r.Header.Clone(), body
		b.rec.mu.Unlock()
	}
	return b.next.RoundTrip(r)
}

func run(o options) error {
	ctx := context.Background()
	data, err := os.MkdirTemp("", "cidx-bench-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(data)
	abs, _ := filepath.Abs(o.repo)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()

	args := []string{"serve", "--data-dir", data, "--http", addr, "--repo", "bench=" + abs, "--log-level", "warn"}
	if o.pprof != "" {
		args = append(args, "--pprof", o.pprof)
	}
	srv := exec.Command(o.bin, args...)
	stdout, _ := srv.StdoutPipe()
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	token := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if t, ok := strings.CutPrefix(sc.Text(), "Admin token (shown once, store it now): "); ok {
			token = strings.TrimSpace(t)
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if token == "" {
		return fmt.Errorf("the server printed no admin token")
	}
	url := "http://" + addr + "/mcp"
	transport := &http.Transport{MaxIdleConnsPerHost: 256}
	rec := &recorded{}
	client := &http.Client{Transport: bearer{token: token, next: transport, rec: rec}}
	connect := func() (*sdk.ClientSession, error) {
		c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
		return c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: client}, &sdk.ClientSessionOptions{ProtocolVersion: o.protocol})
	}
	toolArgs := map[string]any{"repository_alias": "bench-global", "file_path": o.file}
	cs, err := waitReady(ctx, connect, toolArgs)
	if err != nil {
		return err
	}
	// Wait for the repository's search index too: its build would compete
	// with the load for the cores.
	for deadline := time.Now().Add(5 * time.Minute); ; {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_index_status", Arguments: map[string]any{"repository_alias": "bench-global"}})
		if err == nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			var st struct {
				VectorsReady bool `json:"vectors_ready"`
			}
			json.Unmarshal(b, &st)
			if st.VectorsReady {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the repository's index was not ready after 5 minutes")
		}
		time.Sleep(500 * time.Millisecond)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_file_content", Arguments: toolArgs})
	if err != nil {
		return err
	}
	var out struct {
		Metadata struct {
			Size          int `json:"size"`
			ReturnedLines int `json:"returned_lines"`
		} `json:"metadata"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	proto := cs.InitializeResult().ProtocolVersion
	cs.Close()
	time.Sleep(2 * time.Second)
	fmt.Printf("get_file_content %s (%d bytes, %d lines per call), protocol %s, load %s, %d cores\n", o.file, out.Metadata.Size, out.Metadata.ReturnedLines, proto, o.load, numCPU())
	fmt.Printf("idle server RSS: %.1f MB\n\n", rssMB(srv.Process.Pid))
	fmt.Printf("%8s %10s %10s %10s %10s %10s %12s\n", "clients", "calls", "calls/s", "p50 ms", "p99 ms", "max ms", "server RSS")
	for _, f := range strings.Split(o.levels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -clients value %q", f)
		}
		var lat []time.Duration
		var errs int
		if o.load == "raw" {
			if rec.body == nil {
				return fmt.Errorf("-load raw needs the stateless protocol (no tools/call request was recorded); use -load sdk")
			}
			lat, errs, err = loadRaw(url, transport, rec, n, o.duration)
		} else {
			lat, errs, err = loadSDK(ctx, connect, toolArgs, n, o.duration)
		}
		if err != nil {
			return err
		}
		slices.Sort(lat)
		p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		fmt.Printf("%8d %10d %10.0f %10.2f %10.2f %10.2f %9.1f MB\n", n, len(lat), float64(len(lat))/o.duration.Seconds(), p(0.50), p(0.99), p(1), rssMB(srv.Process.Pid))
		if errs > 0 {
			fmt.Printf("         %d calls failed\n", errs)
		}
	}
	return nil
}

func waitReady(ctx context.Context, connect func() (*sdk.ClientSession, error), args map[string]any) (*sdk.ClientSession, error) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		cs, err := connect()
		if err == nil {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_file_content", Arguments: args})
			if err == nil && !res.IsError {
				return cs, nil
			}
			cs.Close()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("repository not readable after 2 minutes")
}

// worker runs call in a loop until stop and returns latencies and failures.
func worker(stop time.Time, call func() bool) ([]time.Duration, int) {
	var lat []time.Duration
	bad := 0
	for time.Now().Before(stop) {
		t := time.Now()
		ok := call()
		lat = append(lat, time.Since(t))
		if !ok {
			bad++
		}
	}
	return lat, bad
}

// fanOut runs n workers built by mk and gathers their results.
func fanOut(n int, d time.Duration, mk func(i int) func() bool) ([]time.Duration, int) {
	var mu sync.Mutex
	var all []time.Duration
	errs := 0
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range n {
		call := mk(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat, bad := worker(stop, call)
			mu.Lock()
			all = append(all, lat...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, errs
}

// loadRaw replays the recorded tools/call request with a unique JSON-RPC
// id per call and checks every response for a success.
func loadRaw(url string, transport http.RoundTripper, rec *recorded, n int, d time.Duration) ([]time.Duration, int, error) {
	var msg map[string]any
	if err := json.Unmarshal(rec.body, &msg); err != nil {
		return nil, 0, err
	}
	msg["id"] = 987654321
	tmpl, _ := json.Marshal(msg)
	client := &http.Client{Transport: transport}
	var next atomic.Int64
	lat, errs := fanOut(n, d, func(int) func() bool {
		return func() bool {
			body := bytes.Replace(tmpl, []byte("987654321"), []byte(strconv.FormatInt(next.Add(1), 10)), 1)
			req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
			req.Header = rec.header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				return false
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode == 200 && bytes.Contains(b, []byte(`"success":true`))
		}
	})
	return lat, errs, nil
}

// loadSDK gives each worker its own go-sdk client session.
func loadSDK(ctx context.Context, connect func() (*sdk.ClientSession, error), args map[string]any, n int, d time.Duration) ([]time.Duration, int, error) {
	sessions := make([]*sdk.ClientSession, n)
	for i := range sessions {
		cs, err := connect()
		if err != nil {
			return nil, 0, err
		}
		defer cs.Close()
		sessions[i] = cs
	}
	lat, errs := fanOut(n, d, func(i int) func() bool {
		return func() bool {
			res, err := sessions[i].CallTool(ctx, &sdk.CallToolParams{Name: "get_file_content", Arguments: args})
			return err == nil && !res.IsError
		}
	})
	return lat, errs, nil
}

func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.Fields(rest)[0])
			return float64(kb) / 1024
		}
	}
	return 0
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
