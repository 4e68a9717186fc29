package main

// Fast rows: an optimisation, not the way to answer a list. The plain way
// reads the rows with sqlc's functions and converts each with toProto, as
// every other plugin does; start from that. The post list is the Graph's
// hottest read, so book builds its answer straight from the rows the
// hand-written readers of bookdb (fastrows.go there) hand over: the text of
// every post (id, Page id, content, audience, created time) goes into one
// buffer that becomes the posts' strings, and the posts, the list and its
// rows are reused from call to call (listPool, taken back through
// sdk.Call.AfterAnswer once the answer is encoded).
// TestAListedPostIsThePostItsIdReadsOnEveryKindOfPage checks that a listed
// post is the post GetPost reads the plain way.

import (
	"strconv"
	"strings"
	"sync"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// postList builds a list's answer straight from the rows. The text of every
// post is written into one buffer whose string the posts' strings share,
// so that a page of posts costs a handful of allocations instead of seven
// per post (issue 15); the posts, the rows and the answer are kept in the
// list, which listPool hands from call to call (issue 34).
type postList struct {
	rows  []listedPost
	text  strings.Builder
	posts []bookv1.Post
	data  []*bookv1.Post
	res   bookv1.ListPostsResponse
}

// listPool holds the lists of answers already encoded.
var listPool = sync.Pool{New: func() any { return new(postList) }}

// takeList returns a list from the pool; call's answer gives it back once
// encoded, after which nothing reads the posts or their strings.
func takeList(call *sdk.Call) *postList {
	l := listPool.Get().(*postList)
	call.AfterAnswer(l.release)
	return l
}

// release puts l back in the pool, keeping no post's text: its next use
// grows a buffer of its own.
func (l *postList) release() {
	l.text = strings.Builder{}
	clear(l.posts)
	clear(l.data)
	l.res = bookv1.ListPostsResponse{}
	listPool.Put(l)
}

// listedPost is one row read: its id, and where its strings lie in the
// list's text, from start, each ending where the next begins.
type listedPost struct {
	id                                                  int64
	start, idEnd, pageEnd, contentEnd, audienceEnd, end int32
}

// start empties l for a read of up to n rows.
func (l *postList) start(n int32) {
	if cap(l.rows) < int(n) {
		l.rows = make([]listedPost, 0, n)
	}
	l.rows = l.rows[:0]
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
// response, which lives in l.
func (l *postList) answer(w sdk.Window) *bookv1.ListPostsResponse {
	rows, paging := sdk.Page(w, l.rows, func(p listedPost) int64 { return p.id })
	text := l.text.String()
	if cap(l.posts) < len(rows) {
		l.posts = make([]bookv1.Post, len(rows))
		l.data = make([]*bookv1.Post, len(rows))
	}
	posts, data := l.posts[:len(rows)], l.data[:len(rows)]
	res := &l.res
	res.Data = data
	paging.Set(res)
	for i, r := range rows {
		p := &posts[i]
		p.Id = text[r.start:r.idEnd]
		p.PageId = text[r.idEnd:r.pageEnd]
		p.Content = text[r.pageEnd:r.contentEnd]
		p.Audience = text[r.contentEnd:r.audienceEnd]
		p.CreatedTime = text[r.audienceEnd:r.end]
		data[i] = p
	}
	return res
}
