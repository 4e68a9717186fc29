package sdk

import (
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// databaseUnavailable reports whether err says that PostgreSQL could not be
// reached or went away during the call (a restart, a crash, a failover, a
// full connection table), rather than that the call itself was wrong. Such
// a call may succeed when retried, so callers see a transient 503 (code 2),
// not an internal error; a write retried with the same Idempotency-Key is
// applied at most once.
func databaseUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // admin shutdown, crash shutdown, cannot connect now
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		// pgx's own words for a connection that closed under it
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "conn busy")
}
