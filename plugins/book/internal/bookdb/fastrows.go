package bookdb

// Fast rows: an optimisation, not the way to read rows. A plugin reads with
// the functions sqlc generates (ListPostsFirst, …); start from those, as
// every other plugin does. These exist because the Graph's hottest read
// lists posts, and sqlc's list functions allocate a BookPost and five
// strings per row and grow their slice row by row (two thirds of the book
// plugin's garbage per read, issue 15). Written by hand next to what sqlc
// generates, PostsFirst, PostsAfter and PostsBefore give the very SQL of
// ListPostsFirst, ListPostsAfter and ListPostsBefore, and EachPost hands
// each row of their answer to the caller without copying its text;
// fastrows_test.go checks that they read what sqlc's functions read.

import (
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// PostRow is one row of book.posts as EachPost hands it over: BookPost with its text as bytes, which are
// valid only until the callback returns (the caller copies what it keeps).
type PostRow struct {
	ID           int64
	PageID       []byte
	AuthorUserID []byte
	AppID        []byte
	Content      []byte
	Audience     []byte
	CreatedAt    pgtype.Timestamptz
}

// PostQuery is one of the lists' statements with its arguments, for a
// caller that sends it itself (book's pipelined reads) and hands its rows
// to EachPost.
type PostQuery struct {
	SQL  string
	Args []any
}

// PostsFirst is ListPostsFirst's statement.
func PostsFirst(arg ListPostsFirstParams) PostQuery {
	return PostQuery{SQL: listPostsFirst, Args: []any{arg.PageID, arg.Lim}}
}

// PostsAfter is ListPostsAfter's statement.
func PostsAfter(arg ListPostsAfterParams) PostQuery {
	return PostQuery{SQL: listPostsAfter, Args: []any{arg.PageID, arg.Cursor, arg.Lim}}
}

// PostsBefore is ListPostsBefore's statement (older to newer from the
// cursor).
func PostsBefore(arg ListPostsBeforeParams) PostQuery {
	return PostQuery{SQL: listPostsBefore, Args: []any{arg.PageID, arg.Cursor, arg.Lim}}
}

// EachPost calls row for each of rows, a PostQuery's, in order;
// rows.Conn() must be the connection they came on. It reads rows of
// book.posts' columns in table order (the lists' SELECT *). Text is the
// same bytes in either result format and is handed over as pgx received it;
// the id and the time are decoded with the plans pgx makes for them, once
// per query. (rows.Scan would also plan, and allocate, for every column it
// is told to skip.)
func EachPost(rows pgx.Rows, row func(*PostRow) error) error {
	defer rows.Close()
	var r PostRow
	var scanID, scanCreatedAt pgtype.ScanPlan
	for rows.Next() {
		raw := rows.RawValues()
		fields := rows.FieldDescriptions()
		if scanID == nil {
			types := rows.Conn().TypeMap()
			scanID = types.PlanScan(fields[0].DataTypeOID, fields[0].Format, &r.ID)
			scanCreatedAt = types.PlanScan(fields[6].DataTypeOID, fields[6].Format, &r.CreatedAt)
		}
		if err := scanID.Scan(raw[0], &r.ID); err != nil {
			return fmt.Errorf("book.posts.%s: %w", fields[0].Name, err)
		}
		if err := scanCreatedAt.Scan(raw[6], &r.CreatedAt); err != nil {
			return fmt.Errorf("book.posts.%s: %w", fields[6].Name, err)
		}
		for i, text := range [...]*[]byte{&r.PageID, &r.AuthorUserID, &r.AppID, &r.Content, &r.Audience} {
			col := 1 + i // the text columns follow the id
			if raw[col] == nil {
				// The columns are NOT NULL; sqlc's scan into a string would fail too.
				return fmt.Errorf("book.posts.%s is NULL", fields[col].Name)
			}
			*text = raw[col]
		}
		if err := row(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}
