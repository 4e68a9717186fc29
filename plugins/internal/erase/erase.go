// Package erase runs a plugin's user-left hook (sdk.OnUserLeft) as most
// products write it: deletes naming the person, in one transaction.
package erase

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// User runs stmts in one transaction, each with the user id as $1.
func User(ctx context.Context, pool *pgxpool.Pool, userID string, stmts ...string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, stmt := range stmts {
			if _, err := tx.Exec(ctx, stmt, userID); err != nil {
				return fmt.Errorf("erase a person who left: %w", err)
			}
		}
		return nil
	})
}
