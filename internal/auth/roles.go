// Package auth holds identities and what they may do: users, roles, the
// role -> permission table, passwords and bearer tokens. Every permission
// decision in cidx is made here, from the single table below.
package auth

import (
	"fmt"
	"slices"
)

// Role is a user's role.
type Role string

// The three roles, from least to most privileged.
const (
	NormalUser Role = "normal_user"
	PowerUser  Role = "power_user"
	Admin      Role = "admin"
)

// Roles lists every role in order of privilege.
var Roles = []Role{NormalUser, PowerUser, Admin}

// Permission names one capability a tool may require.
type Permission string

// Permissions, named as in the CIDX contract (section 1.7).
const (
	// None marks tools anyone authenticated may call.
	None              Permission = ""
	QueryRepos        Permission = "query_repos"
	RepositoryRead    Permission = "repository:read"
	ActivateRepos     Permission = "activate_repos"
	RepositoryWrite   Permission = "repository:write"
	ManageUsers       Permission = "manage_users"
	ManageGoldenRepos Permission = "manage_golden_repos"
	RepositoryAdmin   Permission = "repository:admin"
)

// rolePermissions is the one role -> permission table. Each role inherits
// everything of the roles below it.
var rolePermissions = map[Role][]Permission{
	NormalUser: {QueryRepos, RepositoryRead},
	PowerUser:  {QueryRepos, RepositoryRead, ActivateRepos, RepositoryWrite},
	Admin:      {QueryRepos, RepositoryRead, ActivateRepos, RepositoryWrite, ManageUsers, ManageGoldenRepos, RepositoryAdmin},
}

// ParseRole validates a role name.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if _, ok := rolePermissions[r]; !ok {
		return "", fmt.Errorf("invalid role %q: use one of normal_user, power_user, admin", s)
	}
	return r, nil
}

// Permissions returns the permissions a role grants, in a fixed order.
func (r Role) Permissions() []Permission { return slices.Clone(rolePermissions[r]) }

// Has reports whether the role grants p. None is granted to every valid role.
func (r Role) Has(p Permission) bool {
	perms, ok := rolePermissions[r]
	if !ok {
		return false
	}
	return p == None || slices.Contains(perms, p)
}

// Caller is the identity a request runs as.
type Caller struct {
	Name string
	Role Role
}

// Check returns nil when the caller may use something that requires p, and
// otherwise an error naming the missing permission.
func (c *Caller) Check(p Permission, what string) error {
	if c == nil {
		return &DeniedError{Permission: p, What: what, Reason: "no authenticated user"}
	}
	if !c.Role.Has(p) {
		return &DeniedError{Permission: p, What: what, Role: c.Role}
	}
	return nil
}

// DeniedError says which permission was missing.
type DeniedError struct {
	Permission Permission
	What       string
	Role       Role
	Reason     string
}

func (e *DeniedError) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("permission denied: %s requires permission %q (%s)", e.What, e.Permission, e.Reason)
	}
	return fmt.Sprintf("permission denied: %s requires permission %q, which role %q does not have", e.What, e.Permission, e.Role)
}
