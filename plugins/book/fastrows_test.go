package main

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	bookv1 "github.com/svcplatform/svc/gen/svc/book/v1"
	pluginv1 "github.com/svcplatform/svc/gen/svc/plugin/v1"
	"github.com/svcplatform/svc/plugins/book/internal/bookdb"
	"github.com/svcplatform/svc/sdk"
)

// TestTheListAnswerIsTheBytesProtobufWouldWrite holds postList's hand-made
// encoding to proto.Marshal's of the same list built the plain way (toProto
// and Paging.Set): on first, middle, last and backward pages, an empty
// list, empty and non-ASCII text, and a list reused after release.
func TestTheListAnswerIsTheBytesProtobufWouldWrite(t *testing.T) {
	checkFieldNumbers(t)
	at := time.Date(2026, 11, 27, 19, 30, 0, 0, time.FixedZone("CET", 3600))
	var rows []bookdb.BookPost
	for i, content := range []string{"☕ café 咖啡 🚀", "", "short", string(bytes.Repeat([]byte("long "), 3000)), "x"} {
		rows = append(rows, bookdb.BookPost{
			ID: int64(1000000001 + i), PageID: "100000000000003", AuthorUserID: "100000000000001", Content: content,
			Audience:  []string{"everyone", "followers", "only_me"}[i%3],
			CreatedAt: pgtype.Timestamptz{Time: at.Add(time.Duration(i) * time.Second), Valid: true},
		})
	}
	cursor := func(id int64) string {
		_, p := sdk.Page(sdk.Window{Limit: 1}, []int64{id}, func(id int64) int64 { return id })
		return p.After
	}
	after, before := cursor(rows[1].ID), cursor(rows[4].ID)
	for _, c := range []struct {
		name          string
		limit         int32
		after, before string
		read          []bookdb.BookPost // what the query returns: Fetch rows at most
	}{
		{"first page, more after it", 2, "", "", rows[:3]},
		{"the whole list", 10, "", "", rows},
		{"a middle page", 2, after, "", rows[2:5]},
		{"the last page", 3, after, "", rows[2:5]},
		{"backward, more before it", 2, "", before, []bookdb.BookPost{rows[3], rows[2], rows[1]}},
		{"an empty list", 10, "", "", nil},
		{"an empty page after a cursor", 10, after, "", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := sdk.ParseWindow(c.limit, c.after, c.before)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 2 { // the second on a list reused after release
				l := listPool.Get().(*postList)
				l.start(w.Fetch())
				for _, r := range c.read {
					row := bookdb.PostRow{ID: r.ID, PageID: []byte(r.PageID), AuthorUserID: []byte(r.AuthorUserID),
						AppID: []byte(r.AppID), Content: []byte(r.Content), Audience: []byte(r.Audience), CreatedAt: r.CreatedAt}
					if err := l.add(&row); err != nil {
						t.Fatal(err)
					}
				}
				got, err := proto.Marshal(l.answer(w))
				if err != nil {
					t.Fatal(err)
				}
				want, err := proto.Marshal(plainAnswer(w, c.read))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					var decoded bookv1.ListPostsResponse
					derr := proto.Unmarshal(got, &decoded)
					t.Fatalf("round %d: the answer is\n%x\n(decoded: %v, %v)\nproto.Marshal writes\n%x", round, got, &decoded, derr, want)
				}
				l.release()
			}
		})
	}
}

// plainAnswer is the list answer built the plain way, as every other
// plugin builds one.
func plainAnswer(w sdk.Window, read []bookdb.BookPost) *bookv1.ListPostsResponse {
	page, paging := sdk.Page(w, read, func(p bookdb.BookPost) int64 { return p.ID })
	res := &bookv1.ListPostsResponse{}
	for _, p := range page {
		res.Data = append(res.Data, toProto(p))
	}
	paging.Set(res)
	return res
}

// checkFieldNumbers holds fastrows.go's field numbers to the generated code.
func checkFieldNumbers(t *testing.T) {
	t.Helper()
	for _, c := range []struct {
		m     protoreflect.Message
		names []string
		nums  []int
	}{
		{(&bookv1.ListPostsResponse{}).ProtoReflect(), []string{"data", "paging"}, []int{listData, listPaging}},
		{(&bookv1.Post{}).ProtoReflect(), []string{"id", "page_id", "content", "audience", "created_time"},
			[]int{postID, postPageID, postContent, postAudience, postCreatedTime}},
		{(&pluginv1.Paging{}).ProtoReflect(), []string{"before", "after", "has_next", "has_previous"},
			[]int{pagingBefore, pagingAfter, pagingHasNext, pagingHasPrevious}},
	} {
		fields := c.m.Descriptor().Fields()
		if fields.Len() != len(c.names) {
			t.Fatalf("%s has %d fields, fastrows.go encodes %d", c.m.Descriptor().FullName(), fields.Len(), len(c.names))
		}
		for i, name := range c.names {
			if fd := fields.ByName(protoreflect.Name(name)); fd == nil || int(fd.Number()) != c.nums[i] {
				t.Fatalf("%s.%s is not field %d: %v", c.m.Descriptor().FullName(), name, c.nums[i], fd)
			}
		}
	}
}

// TestARowWhoseTextIsNotUTF8IsRefusedAsProtobufWouldRefuseIt: a protobuf
// string must be UTF-8; the hand-made encoding checks what proto.Marshal
// checked.
func TestARowWhoseTextIsNotUTF8IsRefusedAsProtobufWouldRefuseIt(t *testing.T) {
	for _, bad := range []func(*bookdb.PostRow){
		func(r *bookdb.PostRow) { r.Content = []byte("caf\xe9") },
		func(r *bookdb.PostRow) { r.PageID = []byte{0xff} },
		func(r *bookdb.PostRow) { r.Audience = []byte("every\xc3") },
	} {
		r := bookdb.PostRow{ID: 1, PageID: []byte("1"), Content: []byte("ok"), Audience: []byte("everyone")}
		bad(&r)
		l := new(postList)
		l.start(2)
		if err := l.add(&r); !errors.Is(err, errInvalidText) {
			t.Errorf("%s: add = %v, want errInvalidText", fmt.Sprintf("%q/%q/%q", r.PageID, r.Content, r.Audience), err)
		}
		if _, err := proto.Marshal(&bookv1.Post{Content: string(r.Content), PageId: string(r.PageID), Audience: string(r.Audience)}); err == nil {
			t.Errorf("proto.Marshal accepts %q/%q/%q: the check is not protobuf's", r.PageID, r.Content, r.Audience)
		}
	}
}
