// Package jobs runs long operations (clone, index, refresh, remove) in the
// background with progress, persisted in the metadata database.
//
// The jobs table is also a queue shared by every process on the data
// directory: Submit records a pending job; a server's worker loop claims
// pending jobs with an atomic UPDATE, and the CLI may claim and run the job
// it just submitted itself (RunNow) when it wants to wait for it.
package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/cidx/cidx/internal/store"
)

// Status values of a job.
const (
	Pending   = "pending"
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
	Cancelled = "cancelled"
)

// Job is a persisted background job.
type Job struct {
	ID          string          `json:"job_id"`
	Op          string          `json:"operation_type"`
	Status      string          `json:"status"`
	CreatedAt   string          `json:"created_at"`
	StartedAt   *string         `json:"started_at"`
	CompletedAt *string         `json:"completed_at"`
	Progress    int             `json:"progress"`
	Message     string          `json:"message"`
	Result      json.RawMessage `json:"result"`
	Error       *string         `json:"error"`
	Username    string          `json:"username"`
	Params      json.RawMessage `json:"-"`
}

// Progress reports how far a running job is (0-100) and what it is doing.
type Progress func(percent int, message string)

// Func runs one job. params is the JSON the job was submitted with; the
// returned value becomes the job's result.
type Func func(ctx context.Context, params json.RawMessage, progress Progress) (any, error)

// Manager submits, runs and reports jobs.
type Manager struct {
	db     *store.DB
	worker string
	log    *slog.Logger

	mu    sync.Mutex
	funcs map[string]Func
	wake  chan struct{}
}

// NewManager returns a Manager over db.
func NewManager(db *store.DB, log *slog.Logger) *Manager {
	host, _ := os.Hostname()
	return &Manager{
		db:     db,
		worker: fmt.Sprintf("%s/%d/%s", host, os.Getpid(), rand.Text()[:6]),
		log:    log,
		funcs:  map[string]Func{},
		wake:   make(chan struct{}, 1),
	}
}

// Register makes op runnable by this manager.
func (m *Manager) Register(op string, f Func) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.funcs[op] = f
}

// ErrNotFound is returned for an unknown job or one the caller may not see.
var ErrNotFound = errors.New("job not found")

// Submit records a pending job and returns it.
func (m *Manager) Submit(ctx context.Context, op, username string, params any) (Job, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return Job{}, fmt.Errorf("submit %s: %w", op, err)
	}
	j := Job{ID: uuid.NewString(), Op: op, Status: Pending, CreatedAt: store.Now(), Username: username, Params: p, Message: "queued"}
	_, err = m.db.ExecContext(ctx, "INSERT INTO jobs(id, op, params, username, status, message, created_at) VALUES(?, ?, ?, ?, ?, ?, ?)",
		j.ID, j.Op, string(p), j.Username, j.Status, j.Message, j.CreatedAt)
	if err != nil {
		return Job{}, fmt.Errorf("submit %s: %w", op, err)
	}
	select {
	case m.wake <- struct{}{}:
	default:
	}
	return j, nil
}

// claim moves a pending job to running for this worker; false if someone
// else got it first.
func (m *Manager) claim(ctx context.Context, id string) (bool, error) {
	now := store.Now()
	res, err := m.db.ExecContext(ctx, "UPDATE jobs SET status = ?, started_at = ?, heartbeat_at = ?, worker = ?, message = 'started' WHERE id = ? AND status = ?",
		Running, now, now, m.worker, id, Pending)
	if err != nil {
		return false, fmt.Errorf("claim job %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// RunNow claims the pending job id and runs it in the calling goroutine,
// returning once it has finished.
func (m *Manager) RunNow(ctx context.Context, id string) (Job, error) {
	ok, err := m.claim(ctx, id)
	if err != nil {
		return Job{}, err
	}
	if !ok {
		return m.Wait(ctx, id)
	}
	m.execute(ctx, id)
	return m.get(ctx, id)
}

// Wait polls until job id has finished.
func (m *Manager) Wait(ctx context.Context, id string) (Job, error) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		j, err := m.get(ctx, id)
		if err != nil {
			return j, err
		}
		if j.Done() {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}

// Done reports whether the job has finished, successfully or not.
func (j Job) Done() bool {
	return j.Status == Completed || j.Status == Failed || j.Status == Cancelled
}

func (m *Manager) execute(ctx context.Context, id string) {
	j, err := m.get(ctx, id)
	if err != nil {
		m.log.Error("job vanished", "job", id, "err", err)
		return
	}
	m.mu.Lock()
	f := m.funcs[j.Op]
	m.mu.Unlock()
	var result any
	if f == nil {
		err = fmt.Errorf("no runner for job type %q", j.Op)
	} else {
		m.log.Info("job started", "job", id, "op", j.Op, "user", j.Username)
		progress := func(pct int, msg string) {
			pct = min(max(pct, 0), 99)
			if _, err := m.db.ExecContext(context.WithoutCancel(ctx), "UPDATE jobs SET progress = ?, message = ?, heartbeat_at = ? WHERE id = ?", pct, msg, store.Now(), id); err != nil {
				m.log.Warn("job progress", "job", id, "err", err)
			}
		}
		// A heartbeat tells other processes this job is alive even when a
		// step (a long clone) reports no progress for a while.
		hbCtx, stopHB := context.WithCancel(ctx)
		go func() {
			t := time.NewTicker(heartbeatEvery)
			defer t.Stop()
			for {
				select {
				case <-hbCtx.Done():
					return
				case <-t.C:
					m.db.ExecContext(hbCtx, "UPDATE jobs SET heartbeat_at = ? WHERE id = ?", store.Now(), id)
				}
			}
		}()
		result, err = runSafely(ctx, f, j.Params, progress)
		stopHB()
	}
	now := store.Now()
	bg := context.WithoutCancel(ctx)
	if err != nil {
		m.log.Warn("job failed", "job", id, "op", j.Op, "err", err)
		_, dbErr := m.db.ExecContext(bg, "UPDATE jobs SET status = ?, error = ?, message = 'failed', completed_at = ?, heartbeat_at = ? WHERE id = ?", Failed, err.Error(), now, now, id)
		if dbErr != nil {
			m.log.Error("record job failure", "job", id, "err", dbErr)
		}
		return
	}
	res, _ := json.Marshal(result)
	m.log.Info("job completed", "job", id, "op", j.Op)
	if _, dbErr := m.db.ExecContext(bg, "UPDATE jobs SET status = ?, result = ?, progress = 100, message = 'completed', completed_at = ?, heartbeat_at = ? WHERE id = ?", Completed, string(res), now, now, id); dbErr != nil {
		m.log.Error("record job result", "job", id, "err", dbErr)
	}
}

func runSafely(ctx context.Context, f Func, params json.RawMessage, p Progress) (res any, err error) {
	// Jobs (cloning, indexing) allocate far more than serving does; give
	// that memory back to the system when they end, so an idle server
	// stays small.
	defer debug.FreeOSMemory()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return f(ctx, params, p)
}

// Start runs the worker loop until ctx ends: up to parallel jobs at once,
// picking pending jobs in submission order. Jobs left running by a process
// that died are marked failed first.
func (m *Manager) Start(ctx context.Context, parallel int) {
	m.recoverStale(ctx)
	sem := make(chan struct{}, parallel)
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			for {
				id, err := m.nextPending(ctx)
				if err != nil || id == "" {
					break
				}
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					return
				}
				ok, err := m.claim(ctx, id)
				if err != nil || !ok {
					<-sem
					continue
				}
				go func() {
					defer func() { <-sem }()
					m.execute(ctx, id)
				}()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				m.recoverStale(ctx)
			case <-m.wake:
			}
		}
	}()
}

func (m *Manager) nextPending(ctx context.Context) (string, error) {
	m.mu.Lock()
	ops := make([]any, 0, len(m.funcs))
	for op := range m.funcs {
		ops = append(ops, op)
	}
	m.mu.Unlock()
	if len(ops) == 0 {
		return "", nil
	}
	q := "SELECT id FROM jobs WHERE status = 'pending' AND op IN (?" + repeat(",?", len(ops)-1) + ") ORDER BY created_at LIMIT 1"
	var id string
	err := m.db.QueryRowContext(ctx, q, ops...).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// staleAfter is how long a running job may go without a heartbeat before
// it is presumed dead (its process crashed or was killed).
const (
	staleAfter     = 2 * time.Minute
	heartbeatEvery = 20 * time.Second
)

func (m *Manager) recoverStale(ctx context.Context) {
	cutoff := time.Now().UTC().Add(-staleAfter).Format(time.RFC3339Nano)
	now := store.Now()
	_, err := m.db.ExecContext(ctx, "UPDATE jobs SET status = ?, error = 'interrupted: the process running this job stopped', completed_at = ? WHERE status = ? AND heartbeat_at < ?",
		Failed, now, Running, cutoff)
	if err != nil && ctx.Err() == nil {
		m.log.Warn("recover stale jobs", "err", err)
	}
}

const jobColumns = "id, op, status, created_at, started_at, completed_at, progress, message, result, error, username, params"

func scanJob(row interface{ Scan(...any) error }) (Job, error) {
	var j Job
	var result sql.NullString
	var params string
	err := row.Scan(&j.ID, &j.Op, &j.Status, &j.CreatedAt, &j.StartedAt, &j.CompletedAt, &j.Progress, &j.Message, &result, &j.Error, &j.Username, &params)
	if result.Valid {
		j.Result = json.RawMessage(result.String)
	}
	j.Params = json.RawMessage(params)
	return j, err
}

func (m *Manager) get(ctx context.Context, id string) (Job, error) {
	j, err := scanJob(m.db.QueryRowContext(ctx, "SELECT "+jobColumns+" FROM jobs WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return Job{}, fmt.Errorf("read job: %w", err)
	}
	return j, nil
}

// Get returns job id if username submitted it or all is true (admins).
func (m *Manager) Get(ctx context.Context, id, username string, all bool) (Job, error) {
	j, err := m.get(ctx, id)
	if err != nil {
		return Job{}, fmt.Errorf("job %q not found or not yours: use the job_id returned when the job was started", id)
	}
	if !all && j.Username != username {
		return Job{}, fmt.Errorf("job %q not found or not yours: use the job_id returned when the job was started", id)
	}
	return j, nil
}

// Stats counts jobs by status. Non-admins see counts of their own jobs.
type Stats struct {
	Active    int `json:"active"`
	Pending   int `json:"pending"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
	Total     int `json:"total"`
}

// Statistics returns job counts for username, or for everyone when all.
func (m *Manager) Statistics(ctx context.Context, username string, all bool) (Stats, error) {
	q := "SELECT status, count(*) FROM jobs"
	args := []any{}
	if !all {
		q += " WHERE username = ?"
		args = append(args, username)
	}
	rows, err := m.db.QueryContext(ctx, q+" GROUP BY status", args...)
	if err != nil {
		return Stats{}, fmt.Errorf("job statistics: %w", err)
	}
	defer rows.Close()
	var s Stats
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return s, err
		}
		switch st {
		case Running:
			s.Active = n
		case Pending:
			s.Pending = n
		case Completed:
			s.Completed = n
		case Failed:
			s.Failed = n
		case Cancelled:
			s.Cancelled = n
		}
		s.Total += n
	}
	return s, rows.Err()
}

// List returns the most recent jobs (newest first), for username or all.
func (m *Manager) List(ctx context.Context, username string, all bool, limit int) ([]Job, error) {
	q := "SELECT " + jobColumns + " FROM jobs"
	args := []any{}
	if !all {
		q += " WHERE username = ?"
		args = append(args, username)
	}
	q += " ORDER BY created_at DESC LIMIT ?"
	args = append(args, limit)
	rows, err := m.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	out := []Job{}
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}
