// Package booksql embeds the book plugin's schema migrations, so that they
// ship inside the plugin binary.
package booksql

import (
	"embed"
	"io/fs"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the book schema's migration files, NNNN_name.sql.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the path is fixed at compile time
	}
	return sub
}
