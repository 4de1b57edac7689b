// Package health reports whether the server's parts work: the metadata
// database answers, the data directory is writable and has room, and how
// busy the process is.
package health

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cidx/cidx/internal/jobs"
	"github.com/cidx/cidx/internal/store"
)

// Checker runs the checks.
type Checker struct {
	DB      *store.DB
	DataDir string
	Jobs    *jobs.Manager
	Started time.Time
}

// Service is one component's state.
type Service struct {
	Status         string  `json:"status"`
	ResponseTimeMS float64 `json:"response_time_ms"`
	ErrorMessage   *string `json:"error_message"`
}

// System describes the process and machine.
type System struct {
	RSSMB           float64 `json:"rss_mb"`
	Goroutines      int     `json:"goroutines"`
	CPUs            int     `json:"cpus"`
	ActiveJobs      int     `json:"active_jobs"`
	PendingJobs     int     `json:"pending_jobs"`
	DiskFreeSpaceGB float64 `json:"disk_free_space_gb"`
	UptimeSeconds   int64   `json:"uptime_seconds"`
}

// Report is the full health report.
type Report struct {
	Status    string             `json:"status"`
	Timestamp string             `json:"timestamp"`
	Services  map[string]Service `json:"services"`
	System    System             `json:"system"`
}

// Check runs every check. Status is healthy when all pass, degraded when
// storage is low (under 1 GiB free), unhealthy when a component fails.
func (c *Checker) Check(ctx context.Context) Report {
	r := Report{Status: "healthy", Timestamp: time.Now().UTC().Format(time.RFC3339), Services: map[string]Service{}}
	r.Services["database"] = timed(func() error { return c.DB.PingContext(ctx) })
	r.Services["storage"] = timed(func() error {
		f, err := os.CreateTemp(c.DataDir, ".health-*")
		if err != nil {
			return err
		}
		f.Close()
		return os.Remove(f.Name())
	})
	for _, s := range r.Services {
		if s.Status != "healthy" {
			r.Status = "unhealthy"
		}
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(c.DataDir, &fs); err == nil {
		r.System.DiskFreeSpaceGB = round2(float64(fs.Bavail) * float64(fs.Bsize) / (1 << 30))
		if r.System.DiskFreeSpaceGB < 1 && r.Status == "healthy" {
			r.Status = "degraded"
		}
	}
	if st, err := c.Jobs.Statistics(ctx, "", true); err == nil {
		r.System.ActiveJobs, r.System.PendingJobs = st.Active, st.Pending
	}
	r.System.Goroutines = runtime.NumGoroutine()
	r.System.CPUs = runtime.NumCPU()
	r.System.RSSMB = round2(float64(RSS()) / (1 << 20))
	if !c.Started.IsZero() {
		r.System.UptimeSeconds = int64(time.Since(c.Started).Seconds())
	}
	return r
}

func timed(f func() error) Service {
	start := time.Now()
	err := f()
	s := Service{Status: "healthy", ResponseTimeMS: round2(float64(time.Since(start).Microseconds()) / 1000)}
	if err != nil {
		msg := err.Error()
		s.Status, s.ErrorMessage = "unhealthy", &msg
	}
	return s
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// RSS returns the process's resident set size in bytes (Linux), or 0.
func RSS() int64 {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(os.Getpid()), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n * 1024
			}
		}
	}
	return 0
}
