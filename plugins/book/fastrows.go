package main

// Fast rows: an optimisation, not the way to answer a list. The plain way
// reads the rows with sqlc's functions and converts each with toProto, as
// every other plugin does; start from that. The post list is the Graph's
// hottest read, so book encodes its answer straight from the rows the
// hand-written readers of bookdb (fastrows.go there) hand over: the text of
// every post (id, Page id, content, audience, created time) is copied into
// one buffer, and the answer's protobuf encoding is written from it by hand
// into a second, both reused from call to call (listPool, taken back
// through sdk.Call.AfterAnswer once the answer is encoded): no Post, no
// string and no reflection per call. The encoding rides in the response's
// unknown fields, which proto.Marshal copies as they are, so the bytes the
// gateway gets are proto.Marshal's of the same list
// (TestTheListAnswerIsTheBytesProtobufWouldWrite);
// TestAListedPostIsThePostItsIdReadsOnEveryKindOfPage checks that a listed
// post is the post GetPost reads the plain way.

import (
	"errors"
	"strconv"
	"sync"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// postList builds a list's answer straight from the rows. The text of every
// post is written into one buffer and the answer encoded from it into
// another, so that a page of posts costs no allocation once the list has
// served a call (issues 15 and 34); listPool hands lists from call to call.
type postList struct {
	rows []listedPost
	text []byte // the rows' text
	wire []byte // the answer, as protobuf encodes ListPostsResponse
	res  bookv1.ListPostsResponse
}

// listPool holds the lists of answers already encoded.
var listPool = sync.Pool{New: func() any { return new(postList) }}

// maxKeptBuffer bounds the buffers a list keeps for the next call, as the
// SDK bounds its answer buffers: a page of long posts grows its own.
const maxKeptBuffer = 64 << 10

// takeList returns a list from the pool; call's answer gives it back once
// encoded, after which nothing reads the answer or its bytes.
func takeList(call *sdk.Call) *postList {
	l := listPool.Get().(*postList)
	call.AfterAnswer(l.release)
	return l
}

// release puts l back in the pool with its buffers, unless they grew
// beyond maxKeptBuffer.
func (l *postList) release() {
	l.res = bookv1.ListPostsResponse{} // and its unknown fields: the wire buffer
	if cap(l.text) > maxKeptBuffer {
		l.text = nil
	}
	if cap(l.wire) > maxKeptBuffer {
		l.wire = nil
	}
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
	if l.text == nil {
		l.text = make([]byte, 0, int(n)*128) // ids, Page ids and times take about 60 bytes a post; short posts fit
	}
	l.text = l.text[:0]
}

// errInvalidText is the answer to a row whose text is not UTF-8, which a
// protobuf string must be (proto.Marshal refuses it too); a database in
// UTF8 never hands one over.
var errInvalidText = errors.New("book.posts: a post's text is not valid UTF-8")

// add keeps one row; it is the row callback of bookdb's list readers, whose
// bytes it copies into the text.
func (l *postList) add(r *bookdb.PostRow) error {
	if !utf8.Valid(r.PageID) || !utf8.Valid(r.Content) || !utf8.Valid(r.Audience) {
		return errInvalidText
	}
	p := listedPost{id: r.ID, start: l.end()}
	l.text = strconv.AppendInt(l.text, r.ID, 10)
	p.idEnd = l.end()
	l.text = append(l.text, r.PageID...)
	p.pageEnd = l.end()
	l.text = append(l.text, r.Content...)
	p.contentEnd = l.end()
	l.text = append(l.text, r.Audience...)
	p.audienceEnd = l.end()
	l.text = appendCreatedTime(l.text, r.CreatedAt)
	p.end = l.end()
	l.rows = append(l.rows, p)
	return nil
}

// end is where the text written so far ends; a page of posts is far below
// 2 GiB (sdk.MaxPageSize posts of at most 63,206 code points).
func (l *postList) end() int32 { return int32(len(l.text)) }

// The field numbers of ListPostsResponse, Post and svc.plugin.v1.Paging
// (TestTheListAnswerIsTheBytesProtobufWouldWrite holds them to the
// generated code).
const (
	listData, listPaging                                           = 1, 2
	postID, postPageID, postContent, postAudience, postCreatedTime = 1, 2, 3, 4, 5
	pagingBefore, pagingAfter, pagingHasNext, pagingHasPrevious    = 1, 2, 3, 4
)

// answer trims the rows to w's page, in list order, and returns the
// response, which lives in l: ListPostsResponse as proto.Marshal encodes it
// (fields in number order, empty ones left out), held as unknown fields.
func (l *postList) answer(w sdk.Window) *bookv1.ListPostsResponse {
	rows, paging := sdk.Page(w, l.rows, func(p listedPost) int64 { return p.id })
	t, b := l.text, l.wire[:0]
	for _, r := range rows {
		fields := [...]struct {
			num        protowire.Number
			start, end int32
		}{
			{postID, r.start, r.idEnd}, {postPageID, r.idEnd, r.pageEnd}, {postContent, r.pageEnd, r.contentEnd},
			{postAudience, r.contentEnd, r.audienceEnd}, {postCreatedTime, r.audienceEnd, r.end},
		}
		size := 0
		for _, f := range fields {
			if n := int(f.end - f.start); n > 0 {
				size += protowire.SizeTag(f.num) + protowire.SizeBytes(n)
			}
		}
		b = protowire.AppendTag(b, listData, protowire.BytesType)
		b = protowire.AppendVarint(b, uint64(size))
		for _, f := range fields {
			if f.end > f.start {
				b = protowire.AppendTag(b, f.num, protowire.BytesType)
				b = protowire.AppendBytes(b, t[f.start:f.end])
			}
		}
	}
	b = appendPaging(b, paging)
	l.wire = b
	l.res.ProtoReflect().SetUnknown(b)
	return &l.res
}

// appendPaging appends the list's paging field as proto.Marshal encodes
// it: always present, its empty fields left out.
func appendPaging(b []byte, p sdk.Paging) []byte {
	size := 0
	if p.Before != "" {
		size += protowire.SizeTag(pagingBefore) + protowire.SizeBytes(len(p.Before))
	}
	if p.After != "" {
		size += protowire.SizeTag(pagingAfter) + protowire.SizeBytes(len(p.After))
	}
	if p.HasNext {
		size += protowire.SizeTag(pagingHasNext) + 1
	}
	if p.HasPrevious {
		size += protowire.SizeTag(pagingHasPrevious) + 1
	}
	b = protowire.AppendTag(b, listPaging, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	if p.Before != "" {
		b = protowire.AppendTag(b, pagingBefore, protowire.BytesType)
		b = protowire.AppendString(b, p.Before)
	}
	if p.After != "" {
		b = protowire.AppendTag(b, pagingAfter, protowire.BytesType)
		b = protowire.AppendString(b, p.After)
	}
	if p.HasNext {
		b = protowire.AppendTag(b, pagingHasNext, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	if p.HasPrevious {
		b = protowire.AppendTag(b, pagingHasPrevious, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b
}
