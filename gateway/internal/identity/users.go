package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/svcplatform/svc/gateway/internal/coredb"
)

// User is a person with an account.
type User struct {
	ID       string
	Username string
	Name     string
	Staff    bool
}

func userFrom(u coredb.CoreUser) User {
	return User{ID: FormatID(u.ID), Username: u.Username, Name: u.Name, Staff: u.IsStaff}
}

// NewUser describes a user to create.
type NewUser struct {
	Username string
	Name     string
	Password string
	Staff    bool
	// TestUserOf, when set, is the app this Test User was made for: the
	// user is deleted with the app or when the app removes it.
	TestUserOf string
}

// CreateUser creates a user, hashing the password with argon2id in one of
// the hashing slots (so call it outside a transaction).
func (s *Users) CreateUser(ctx context.Context, n NewUser) (User, error) {
	n.Username = strings.TrimSpace(n.Username)
	if n.Username == "" || len(n.Username) > 64 || strings.ContainsAny(n.Username, " \t\r\n") {
		return User{}, fmt.Errorf("username must be 1 to 64 characters without spaces: %w", ErrInvalid)
	}
	if n.Name == "" {
		n.Name = n.Username
	}
	hash, err := s.hashPassword(ctx, n.Password)
	if err != nil {
		return User{}, err
	}
	return s.insertUser(ctx, n, hash)
}

// insertUser stores a checked NewUser whose password was hashed already, so
// that a transaction never waits for a hashing slot or for argon2id.
func (s *store) insertUser(ctx context.Context, n NewUser, passwordHash string) (User, error) {
	p := coredb.CreateUserParams{Username: n.Username, Name: n.Name, PasswordHash: passwordHash, IsStaff: n.Staff}
	if n.TestUserOf != "" {
		aid, err := mustID("app", n.TestUserOf)
		if err != nil {
			return User{}, err
		}
		p.TestUserOf = &aid
	}
	u, err := s.q.CreateUser(ctx, p)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return User{}, fmt.Errorf("create user %q: %w", n.Username, ErrUsernameTaken)
	}
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	return userFrom(u), nil
}

// User returns the user with id.
func (s *Users) User(ctx context.Context, id string) (User, error) {
	uid, err := mustID("user", id)
	if err != nil {
		return User{}, err
	}
	u, err := s.q.GetUser(ctx, uid)
	if err != nil {
		return User{}, notFound(err, "user "+id)
	}
	return userFrom(u), nil
}

// UserByUsername returns the user signing in with username (any case).
func (s *Users) UserByUsername(ctx context.Context, username string) (User, error) {
	u, err := s.q.GetUserByUsername(ctx, strings.TrimSpace(username))
	if err != nil {
		return User{}, notFound(err, "user "+username)
	}
	return userFrom(u), nil
}

// CheckCredentials returns the user whose username and password these are,
// or ErrWrongPassword. It costs one argon2id evaluation whether or not the
// user exists, so timing does not reveal usernames.
func (s *Users) CheckCredentials(ctx context.Context, username, password string) (User, error) {
	u, err := s.q.GetUserByUsername(ctx, strings.TrimSpace(username))
	if errors.Is(err, pgx.ErrNoRows) {
		_, _ = CheckPassword(dummyHash, password)
		return User{}, ErrWrongPassword
	}
	if err != nil {
		return User{}, fmt.Errorf("look up user: %w", err)
	}
	ok, err := CheckPassword(u.PasswordHash, password)
	if err != nil {
		return User{}, fmt.Errorf("user %d: %w", u.ID, err)
	}
	if !ok {
		return User{}, ErrWrongPassword
	}
	return userFrom(u), nil
}

// SetStaff makes a user platform staff, or not.
func (s *Users) SetStaff(ctx context.Context, userID string, staff bool) error {
	uid, err := mustID("user", userID)
	if err != nil {
		return err
	}
	n, err := s.q.SetUserStaff(ctx, coredb.SetUserStaffParams{ID: uid, IsStaff: staff})
	if err != nil {
		return fmt.Errorf("set staff: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("user %s: %w", userID, ErrNotFound)
	}
	return nil
}

// Me is the Graph `me` node: the user's id and name.
type Me struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Me returns the `me` object of the user.
func (s *Users) Me(ctx context.Context, userID string) (Me, error) {
	u, err := s.User(ctx, userID)
	if err != nil {
		return Me{}, err
	}
	return Me{ID: u.ID, Name: u.Name}, nil
}

func (s *store) requireStaff(ctx context.Context, userID string) (int64, error) {
	u, err := s.all.Users.User(ctx, userID)
	if err != nil {
		return 0, err
	}
	if !u.Staff {
		return 0, fmt.Errorf("user %s: %w", userID, ErrNotStaff)
	}
	id, _ := ParseID(u.ID)
	return id, nil
}
