package main

// Fast rows: an optimisation, not the way to answer a list. The plain way
// reads the rows with sqlc's functions and converts each with toProto, as
// every other plugin does; start from that. The post list is the Graph's
// hottest read, so book builds its answer straight from the rows the
// hand-written readers of bookdb (fastrows.go there) hand over: the text of
// every post (id, Page id, content, audience, created time) goes into one
// buffer that becomes the posts' strings, and the posts are one allocation.
// TestAListedPostIsThePostItsIdReadsOnEveryKindOfPage checks that a listed
// post is the post GetPost reads the plain way.

import (
	"strconv"
	"strings"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// postList builds a list's answer straight from the rows. The text of every
// post (id, Page id, content, audience, created time) goes into one buffer
// that becomes the posts' strings, and the posts are one allocation: a page
// of posts costs a handful of allocations instead of seven per post
// (issue 15).
type postList struct {
	rows []listedPost
	text strings.Builder
}

// listedPost is one row read: its id, and where its strings lie in the
// list's text, from start, each ending where the next begins.
type listedPost struct {
	id                                                  int64
	start, idEnd, pageEnd, contentEnd, audienceEnd, end int32
}

// start empties l for a read of up to n rows.
func (l *postList) start(n int32) {
	l.rows = make([]listedPost, 0, n)
	l.text.Reset()
	l.text.Grow(int(n) * 128) // ids, Page ids and times take about 60 bytes a post; short posts fit
}

// add keeps one row; it is the row callback of bookdb's list readers, whose
// bytes it copies into the text.
func (l *postList) add(r *bookdb.PostRow) error {
	var scratch [64]byte
	p := listedPost{id: r.ID, start: l.end()}
	l.text.Write(strconv.AppendInt(scratch[:0], r.ID, 10))
	p.idEnd = l.end()
	l.text.Write(r.PageID)
	p.pageEnd = l.end()
	l.text.Write(r.Content)
	p.contentEnd = l.end()
	l.text.Write(r.Audience)
	p.audienceEnd = l.end()
	l.text.Write(appendCreatedTime(scratch[:0], r.CreatedAt))
	p.end = l.end()
	l.rows = append(l.rows, p)
	return nil
}

// end is where the text written so far ends; a page of posts is far below
// 2 GiB (sdk.MaxPageSize posts of at most 63,206 code points).
func (l *postList) end() int32 { return int32(l.text.Len()) }

// answer trims the rows to w's page, in list order, and returns the
// response.
func (l *postList) answer(w sdk.Window) *bookv1.ListPostsResponse {
	rows, paging := sdk.Page(w, l.rows, func(p listedPost) int64 { return p.id })
	text := l.text.String()
	posts := make([]bookv1.Post, len(rows))
	res := &bookv1.ListPostsResponse{Data: make([]*bookv1.Post, len(rows))}
	paging.Set(res)
	for i, r := range rows {
		p := &posts[i]
		p.Id = text[r.start:r.idEnd]
		p.PageId = text[r.idEnd:r.pageEnd]
		p.Content = text[r.pageEnd:r.contentEnd]
		p.Audience = text[r.contentEnd:r.audienceEnd]
		p.CreatedTime = text[r.audienceEnd:r.end]
		res.Data[i] = p
	}
	return res
}
