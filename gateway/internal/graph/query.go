package graph

import (
	"net/url"
	"strings"
	"sync"
)

// query is a GET's parsed query string, kept in a pool: url.Query's map,
// its first group and a slice per parameter were four allocations of
// every Graph read (about 480 bytes). A parameter's value is a one-element
// slice of vals; a repeated parameter's appends copy it out.
type query struct {
	values url.Values
	vals   [maxPooledParams]string
}

// maxPooledParams is how many parameters a pooled query holds; a longer
// query string is parsed by url.Query itself (and with its bound on the
// number of parameters).
const maxPooledParams = 16

var queryPool = sync.Pool{New: func() any { return &query{values: make(url.Values, maxPooledParams)} }}

// parseQuery returns the values of rawQuery as url.ParseQuery does
// (errors ignored, as url.URL.Query does), and the pooled query to hand
// to releaseQuery once nothing reads them any more (nil when the values
// are not pooled). The values' strings are the caller's to keep; the map
// and its slices are not.
func parseQuery(rawQuery string) (url.Values, *query) {
	if strings.Count(rawQuery, "&") >= maxPooledParams {
		v, _ := url.ParseQuery(rawQuery)
		return v, nil
	}
	q := queryPool.Get().(*query)
	n := 0
	// net/url's parseQuery, its errors dropped.
	for rawQuery != "" {
		var key string
		key, rawQuery, _ = strings.Cut(rawQuery, "&")
		if strings.Contains(key, ";") || key == "" {
			continue
		}
		key, value, _ := strings.Cut(key, "=")
		key, err := url.QueryUnescape(key)
		if err != nil {
			continue
		}
		if value, err = url.QueryUnescape(value); err != nil {
			continue
		}
		if old, ok := q.values[key]; ok {
			q.values[key] = append(old, value)
			continue
		}
		q.vals[n] = value
		q.values[key] = q.vals[n : n+1 : n+1]
		n++
	}
	return q.values, q
}

// releaseQuery returns q, from parseQuery, to the pool.
func releaseQuery(q *query) {
	if q == nil {
		return
	}
	clear(q.values)
	q.vals = [maxPooledParams]string{}
	queryPool.Put(q)
}
