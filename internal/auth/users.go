package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"golang.org/x/crypto/argon2"

	"github.com/cidx/cidx/internal/store"
)

// User is a stored account (never with its password hash).
type User struct {
	Name      string `json:"username"`
	Role      Role   `json:"role"`
	CreatedAt string `json:"created_at"`
}

// Token describes a bearer token; the secret itself is never stored.
type Token struct {
	ID         string  `json:"id"`
	User       string  `json:"username"`
	Label      string  `json:"name"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

// Errors callers can test for.
var (
	ErrUserExists   = errors.New("user already exists")
	ErrUserNotFound = errors.New("user not found")
	ErrTokenInvalid = errors.New("invalid or revoked token")
)

// Service manages users and tokens in the metadata database.
type Service struct {
	db *store.DB
	// tokens caches verified tokens (by hash) for a second: every HTTP
	// request verifies one. Revocation in this process applies at once, from
	// another process (the CLI) within the second.
	tokens *store.Cache[string, Caller]
}

// NewService returns a Service over db.
func NewService(db *store.DB) *Service {
	return &Service{db: db, tokens: store.NewCache[string, Caller](time.Second, 10000)}
}

var userNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidateUserName checks a user name.
func ValidateUserName(name string) error {
	if !userNameRE.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("invalid user name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	return nil
}

// CreateUser adds a user. password must satisfy ValidatePassword.
func (s *Service) CreateUser(ctx context.Context, name string, role Role, password string) (User, error) {
	if err := ValidateUserName(name); err != nil {
		return User{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return User{}, err
	}
	if err := ValidatePassword(name, password); err != nil {
		return User{}, err
	}
	u := User{Name: name, Role: role, CreatedAt: store.Now()}
	_, err := s.db.ExecContext(ctx, "INSERT INTO users(name, role, password_hash, created_at) VALUES(?, ?, ?, ?)",
		u.Name, string(u.Role), hashPassword(password), u.CreatedAt)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "PRIMARY KEY") {
			return User{}, fmt.Errorf("%w: %s", ErrUserExists, name)
		}
		return User{}, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// GetUser returns the named user.
func (s *Service) GetUser(ctx context.Context, name string) (User, error) {
	var u User
	err := s.db.QueryRowFast(ctx, "SELECT name, role, created_at FROM users WHERE name = ?", name).Scan(&u.Name, &u.Role, &u.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("%w: %s", ErrUserNotFound, name)
	}
	if err != nil {
		return User{}, fmt.Errorf("read user: %w", err)
	}
	return u, nil
}

// ListUsers returns every user sorted by name.
func (s *Service) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT name, role, created_at FROM users ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	users := []User{}
	for rows.Next() {
		var u User
		if err := rows.Scan(&u.Name, &u.Role, &u.CreatedAt); err != nil {
			return nil, fmt.Errorf("list users: %w", err)
		}
		users = append(users, u)
	}
	return users, rows.Err()
}

// CountUsers returns how many users exist.
func (s *Service) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&n)
	return n, err
}

// RemoveUser deletes a user and, with it, all of their tokens. The last
// admin cannot be removed, so the server never locks itself out.
func (s *Service) RemoveUser(ctx context.Context, name string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("remove user: %w", err)
	}
	defer tx.Rollback()
	var role string
	if err := tx.QueryRowContext(ctx, "SELECT role FROM users WHERE name = ?", name).Scan(&role); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", ErrUserNotFound, name)
		}
		return fmt.Errorf("remove user: %w", err)
	}
	if Role(role) == Admin {
		var admins int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users WHERE role = ?", string(Admin)).Scan(&admins); err != nil {
			return fmt.Errorf("remove user: %w", err)
		}
		if admins <= 1 {
			return fmt.Errorf("cannot remove %s: it is the last admin; create another admin first", name)
		}
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM tokens WHERE user_name = ?", name); err != nil {
		return fmt.Errorf("remove user: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM users WHERE name = ?", name); err != nil {
		return fmt.Errorf("remove user: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("remove user: %w", err)
	}
	s.tokens.Forget()
	return nil
}

// VerifyPassword checks name's password.
func (s *Service) VerifyPassword(ctx context.Context, name, password string) (User, error) {
	var u User
	var hash string
	err := s.db.QueryRowContext(ctx, "SELECT name, role, created_at, password_hash FROM users WHERE name = ?", name).Scan(&u.Name, &u.Role, &u.CreatedAt, &hash)
	if err != nil || !checkPassword(hash, password) {
		return User{}, errors.New("invalid user name or password")
	}
	return u, nil
}

// tokenPrefix marks cidx bearer tokens so that secret scanners can find them.
const tokenPrefix = "cidx_"

// CreateToken issues a bearer token for user. The plain token is returned
// once; only its SHA-256 is stored. Tokens carry 130 bits of randomness, so
// a fast hash is enough and lookup is a single indexed read.
func (s *Service) CreateToken(ctx context.Context, user, label string) (string, Token, error) {
	if _, err := s.GetUser(ctx, user); err != nil {
		return "", Token{}, err
	}
	if len(label) > 100 {
		return "", Token{}, fmt.Errorf("token name is too long (%d characters; at most 100)", len(label))
	}
	secret := tokenPrefix + rand.Text()
	t := Token{ID: "tok_" + strings.ToLower(rand.Text()[:12]), User: user, Label: label, CreatedAt: store.Now()}
	_, err := s.db.ExecContext(ctx, "INSERT INTO tokens(id, user_name, label, hash, created_at) VALUES(?, ?, ?, ?, ?)",
		t.ID, t.User, t.Label, hashToken(secret), t.CreatedAt)
	if err != nil {
		return "", Token{}, fmt.Errorf("create token: %w", err)
	}
	return secret, t, nil
}

// ListTokens returns user's tokens, oldest first.
func (s *Service) ListTokens(ctx context.Context, user string) ([]Token, error) {
	if _, err := s.GetUser(ctx, user); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT id, user_name, label, created_at, last_used_at FROM tokens WHERE user_name = ? ORDER BY created_at, id", user)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	tokens := []Token{}
	for rows.Next() {
		var t Token
		if err := rows.Scan(&t.ID, &t.User, &t.Label, &t.CreatedAt, &t.LastUsedAt); err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		tokens = append(tokens, t)
	}
	return tokens, rows.Err()
}

// RevokeToken deletes a token by id.
func (s *Service) RevokeToken(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, "DELETE FROM tokens WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("token %q not found: use 'cidx token list USER' to see token ids", id)
	}
	s.tokens.Forget()
	return nil
}

// VerifyToken returns the caller a bearer token belongs to.
func (s *Service) VerifyToken(ctx context.Context, secret string) (Caller, error) {
	if !strings.HasPrefix(secret, tokenPrefix) || len(secret) > 200 {
		return Caller{}, ErrTokenInvalid
	}
	hash := hashToken(secret)
	return s.tokens.Get(hash, func() (Caller, error) {
		var c Caller
		err := s.db.QueryRowFast(ctx, "SELECT u.name, u.role FROM tokens t JOIN users u ON u.name = t.user_name WHERE t.hash = ?", hash).Scan(&c.Name, &c.Role)
		if errors.Is(err, sql.ErrNoRows) {
			return Caller{}, ErrTokenInvalid
		}
		if err != nil {
			return Caller{}, fmt.Errorf("verify token: %w", err)
		}
		return c, nil
	})
}

// Caller returns the current identity of a user by name.
func (s *Service) Caller(ctx context.Context, name string) (Caller, error) {
	u, err := s.GetUser(ctx, name)
	if err != nil {
		return Caller{}, err
	}
	return Caller{Name: u.Name, Role: u.Role}, nil
}

func hashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// argon2id parameters: 19 MiB, 2 passes, 1 lane (OWASP's recommendation),
// which costs about 50 ms here; passwords are only checked at log-in.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
)

func hashPassword(password string) string {
	salt := make([]byte, 16)
	rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

func checkPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// GeneratePassword returns a random password that satisfies ValidatePassword.
func GeneratePassword() string {
	for {
		// rand.Text is base32 (upper case and digits); add the other classes.
		p := "Cx-" + rand.Text() + "-a9"
		if ValidatePassword("", p) == nil {
			return p
		}
	}
}

// Bootstrap creates the first admin on an empty database and returns a new
// token for it. created is false (and token empty) when users already exist.
// The password is random and not shown: the token is how the admin gets in.
func (s *Service) Bootstrap(ctx context.Context) (token string, created bool, err error) {
	n, err := s.CountUsers(ctx)
	if err != nil || n > 0 {
		return "", false, err
	}
	if _, err := s.CreateUser(ctx, "admin", Admin, GeneratePassword()); err != nil {
		if errors.Is(err, ErrUserExists) {
			return "", false, nil // another process bootstrapped first
		}
		return "", false, err
	}
	token, _, err = s.CreateToken(ctx, "admin", "bootstrap")
	if err != nil {
		return "", false, err
	}
	return token, true, nil
}

var commonPasswords = []string{"password", "123456", "qwerty", "letmein", "welcome", "admin", "iloveyou", "monkey", "dragon", "abc123", "changeme", "secret"}

// ValidatePassword applies the password policy: 12-128 characters, at least
// three of four character classes, not containing the user name, a common
// password or a long run of sequential or repeated characters.
func ValidatePassword(user, password string) error {
	var problems []string
	n := len([]rune(password))
	if n < 12 {
		problems = append(problems, fmt.Sprintf("it has %d characters; use at least 12", n))
	}
	if n > 128 {
		problems = append(problems, fmt.Sprintf("it has %d characters; use at most 128", n))
	}
	var lower, upper, digit, other bool
	for _, r := range password {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	classes := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			classes++
		}
	}
	if classes < 3 {
		problems = append(problems, "mix at least three of: lower case, upper case, digits, symbols")
	}
	low := strings.ToLower(password)
	if user != "" && len(user) >= 3 && strings.Contains(low, strings.ToLower(user)) {
		problems = append(problems, "it contains the user name")
	}
	for _, c := range commonPasswords {
		if strings.Contains(low, c) {
			problems = append(problems, fmt.Sprintf("it contains the common password %q", c))
			break
		}
	}
	if hasRun(low, 4) {
		problems = append(problems, "it contains a run of 4 or more sequential or repeated characters")
	}
	if len(problems) > 0 {
		return fmt.Errorf("password does not meet the policy: %s", strings.Join(problems, "; "))
	}
	return nil
}

// hasRun reports a run of n characters that repeat or step by +/-1 ("aaaa", "1234", "dcba").
func hasRun(s string, n int) bool {
	r := []rune(s)
	for _, step := range []rune{0, 1, -1} {
		run := 1
		for i := 1; i < len(r); i++ {
			if r[i]-r[i-1] == step {
				run++
				if run >= n {
					return true
				}
			} else {
				run = 1
			}
		}
	}
	return false
}
