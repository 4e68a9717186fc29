package identity

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sign-up rules (CONTRACT §16).
const (
	// MinPasswordRunes is the shortest password a new account may have,
	// in code points.
	MinPasswordRunes = 10
	// MaxNameRunes bounds a new account's display name.
	MaxNameRunes = 100
)

// validUsername is a username a person may choose: 3 to 64 of a-z, 0-9,
// '.', '_' and '-'.
var validUsername = regexp.MustCompile(`^[a-z0-9._-]{3,64}$`)

// ErrSignUpClosed: the operator closed sign-up (--signup closed).
var ErrSignUpClosed = errors.New("identity: sign-up is closed")

// FieldError refuses one field of a request; Field is its name as the
// client sent it. It matches ErrInvalid, and Err when set (ErrUsernameTaken).
type FieldError struct {
	Field, Message string
	Err            error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap makes errors.Is match ErrInvalid and Err.
func (e *FieldError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

//go:embed common-passwords.txt
var commonPasswordsText string

// commonPasswords holds the embedded list in lower case.
var commonPasswords = func() map[string]struct{} {
	m := map[string]struct{}{}
	sc := bufio.NewScanner(strings.NewReader(commonPasswordsText))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m[strings.ToLower(line)] = struct{}{}
	}
	return m
}()

// CheckUsername refuses a username a person may not choose.
func CheckUsername(username string) error {
	if !validUsername.MatchString(username) {
		return &FieldError{Field: "username", Message: "A username is 3 to 64 characters: lower-case letters a-z, digits, '.', '_' and '-'."}
	}
	return nil
}

// CheckNewPassword refuses a password a new account may not have: shorter
// than MinPasswordRunes code points, longer than the hashing accepts, the
// username itself, or among the common passwords (compared without case).
func CheckNewPassword(username, password string) error {
	switch {
	case !utf8.ValidString(password):
		return &FieldError{Field: "password", Message: "The password is not valid UTF-8."}
	case utf8.RuneCountInString(password) < MinPasswordRunes:
		return &FieldError{Field: "password", Message: fmt.Sprintf("A password has at least %d characters.", MinPasswordRunes)}
	case len(password) > maxPasswordBytes:
		return &FieldError{Field: "password", Message: fmt.Sprintf("A password has at most %d bytes.", maxPasswordBytes)}
	case strings.EqualFold(password, username):
		return &FieldError{Field: "password", Message: "The password must not be the username."}
	}
	if _, common := commonPasswords[strings.ToLower(password)]; common {
		return &FieldError{Field: "password", Message: "This password is among the most common ones; choose another."}
	}
	return nil
}

// checkName refuses a display name with control characters or too long.
func checkName(name string) error {
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameRunes ||
		strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return &FieldError{Field: "name", Message: fmt.Sprintf("A name has at most %d characters and no control characters.", MaxNameRunes)}
	}
	return nil
}

// SetSignUpOpen opens or closes sign-up (--signup); it is open unless
// closed. Call it before serving.
func (s *Service) SetSignUpOpen(open bool) { s.env.signUpClosed = !open }

// SignUpOpen reports whether people may sign up.
func (s *Service) SignUpOpen() bool { return !s.env.signUpClosed }

// SignUp creates a person's account and opens a session for it (CONTRACT
// §16). from is the client's address, whose sign-ups are limited
// (addressSignUps an hour; a *ThrottledError of scope "signup").
//
// The rules are checked first (they are public: nothing is learnt from
// them); then the account is made by CreateUser, which hashes the password
// in a hashing slot before it tries to insert, so that a taken username is
// answered after the same hashing as a new account and timing does not
// tell which names exist. A taken name is a *FieldError naming username
// that also matches ErrUsernameTaken. Call it outside a transaction.
func (s *Users) SignUp(ctx context.Context, from string, n NewUser) (User, Session, error) {
	if s.env.signUpClosed {
		return User{}, Session{}, ErrSignUpClosed
	}
	n.Name = strings.TrimSpace(n.Name)
	if err := CheckUsername(n.Username); err != nil {
		return User{}, Session{}, err
	}
	if err := CheckNewPassword(n.Username, n.Password); err != nil {
		return User{}, Session{}, err
	}
	if err := checkName(n.Name); err != nil {
		return User{}, Session{}, err
	}
	if err := s.signIn.signUp(from); err != nil {
		return User{}, Session{}, err
	}
	u, err := s.CreateUser(ctx, NewUser{Username: n.Username, Name: n.Name, Password: n.Password})
	if errors.Is(err, ErrUsernameTaken) {
		return User{}, Session{}, &FieldError{Field: "username", Message: "This username is taken; choose another.", Err: ErrUsernameTaken}
	}
	if err != nil {
		return User{}, Session{}, err
	}
	sess, err := s.all.Sessions.CreateSession(ctx, u.ID)
	if err != nil {
		return User{}, Session{}, err
	}
	return u, sess, nil
}
