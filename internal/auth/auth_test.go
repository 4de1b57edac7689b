package auth_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cidx/cidx/internal/auth"
	"github.com/cidx/cidx/internal/store"
)

func newService(t *testing.T) *auth.Service {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cidx.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return auth.NewService(db)
}

func TestRolePermissionTable(t *testing.T) {
	// Contract section 1.7, exactly.
	want := map[auth.Role][]auth.Permission{
		auth.NormalUser: {auth.QueryRepos, auth.RepositoryRead},
		auth.PowerUser:  {auth.QueryRepos, auth.RepositoryRead, auth.ActivateRepos, auth.RepositoryWrite},
		auth.Admin:      {auth.QueryRepos, auth.RepositoryRead, auth.ActivateRepos, auth.RepositoryWrite, auth.ManageUsers, auth.ManageGoldenRepos, auth.RepositoryAdmin},
	}
	all := []auth.Permission{auth.QueryRepos, auth.RepositoryRead, auth.ActivateRepos, auth.RepositoryWrite, auth.ManageUsers, auth.ManageGoldenRepos, auth.RepositoryAdmin}
	for role, perms := range want {
		for _, p := range all {
			has := false
			for _, q := range perms {
				has = has || p == q
			}
			if role.Has(p) != has {
				t.Errorf("%s.Has(%s) = %v, want %v", role, p, role.Has(p), has)
			}
		}
		if !role.Has(auth.None) {
			t.Errorf("%s must have the empty permission", role)
		}
	}
	if auth.Role("root").Has(auth.None) {
		t.Error("an unknown role must have nothing")
	}
	c := &auth.Caller{Name: "bob", Role: auth.NormalUser}
	err := c.Check(auth.ManageUsers, "tool list_users")
	if err == nil || !strings.Contains(err.Error(), `"manage_users"`) || !strings.Contains(err.Error(), "normal_user") {
		t.Fatalf("denial must name the permission and role: %v", err)
	}
}

func TestUsersAndTokens(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	token, created, err := s.Bootstrap(ctx)
	if err != nil || !created || !strings.HasPrefix(token, "cidx_") {
		t.Fatalf("bootstrap: %q %v %v", token, created, err)
	}
	if _, again, _ := s.Bootstrap(ctx); again {
		t.Fatal("bootstrap must run once")
	}
	c, err := s.VerifyToken(ctx, token)
	if err != nil || c.Name != "admin" || c.Role != auth.Admin {
		t.Fatalf("verify bootstrap token: %+v %v", c, err)
	}

	if _, err := s.CreateUser(ctx, "bob", auth.NormalUser, "short"); err == nil || !strings.Contains(err.Error(), "at least 12") {
		t.Fatalf("weak password accepted: %v", err)
	}
	if _, err := s.CreateUser(ctx, "bob", auth.NormalUser, "password12345678"); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("common password accepted: %v", err)
	}
	if _, err := s.CreateUser(ctx, "../bob", auth.NormalUser, "Str0ng-Passw0rd!x"); err == nil {
		t.Fatal("bad user name accepted")
	}
	if _, err := s.CreateUser(ctx, "bob", "root", "Str0ng-Passw0rd!x"); err == nil || !strings.Contains(err.Error(), "invalid role") {
		t.Fatalf("bad role accepted: %v", err)
	}
	if _, err := s.CreateUser(ctx, "bob", auth.NormalUser, "Str0ng-Pazzw0rd!x"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, "bob", auth.NormalUser, "Str0ng-Pazzw0rd!x"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("duplicate user: %v", err)
	}
	if _, err := s.VerifyPassword(ctx, "bob", "Str0ng-Pazzw0rd!x"); err != nil {
		t.Fatalf("password check: %v", err)
	}
	if _, err := s.VerifyPassword(ctx, "bob", "Str0ng-Pazzw0rd!y"); err == nil {
		t.Fatal("wrong password accepted")
	}

	secret, tok, err := s.CreateToken(ctx, "bob", "laptop")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := s.VerifyToken(ctx, secret); err != nil || c.Name != "bob" {
		t.Fatalf("verify: %+v %v", c, err)
	}
	list, _ := s.ListTokens(ctx, "bob")
	if len(list) != 1 || list[0].ID != tok.ID || list[0].Label != "laptop" {
		t.Fatalf("list: %+v", list)
	}
	if err := s.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(ctx, secret); err == nil {
		t.Fatal("revoked token still works")
	}
	if _, err := s.VerifyToken(ctx, "cidx_"+strings.Repeat("A", 26)); err == nil {
		t.Fatal("made-up token accepted")
	}

	// Removing a user removes their tokens; the last admin stays.
	secret2, _, _ := s.CreateToken(ctx, "bob", "")
	if err := s.RemoveUser(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(ctx, secret2); err == nil {
		t.Fatal("token of a removed user still works")
	}
	if err := s.RemoveUser(ctx, "admin"); err == nil || !strings.Contains(err.Error(), "last admin") {
		t.Fatalf("last admin removed: %v", err)
	}
}

func TestGeneratedPasswordsPassPolicy(t *testing.T) {
	for range 200 {
		if err := auth.ValidatePassword("someone", auth.GeneratePassword()); err != nil {
			t.Fatal(err)
		}
	}
}
