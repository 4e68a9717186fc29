package console

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestFieldOfPicksTheLongestFormFieldTheMessageNamesAsAWord(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		message string
		names   []string
		want    string
	}{
		{`Invalid parameter: uri: redirect uri "ftp://x": a custom scheme must be a reverse domain name`, []string{"uri"}, "uri"},
		{"Invalid parameter: redirect_uris: at most 10", []string{"name", "redirect_uris", "products"}, "redirect_uris"},
		{"name: value does not match regex", []string{"name", "body", "params"}, "name"},
		{"The app's username is taken", []string{"name"}, ""}, // "name" inside a word is not the field
		{"Something went wrong", []string{"name", "body"}, ""},
	} {
		if got := fieldOf(tc.message, tc.names); got != tc.want {
			t.Errorf("fieldOf(%q, %q) = %q, want %q", tc.message, tc.names, got, tc.want)
		}
	}
}

func TestAPlainFormBecomesTheJSONTheScriptSends(t *testing.T) {
	t.Parallel()
	form := url.Values{
		"name":          {"  Shop  "},
		"redirect_uris": {"https://a.example/cb,\r\nhttps://b.example/cb\n\n"},
		"csrf_token":    {"t"},
		"op":            {"create-app"},
	}
	got := plainOps["create-app"].body(form)
	want := map[string]any{"name": "Shop", "redirect_uris": []string{"https://a.example/cb", "https://b.example/cb"}, "products": []string{}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("create-app body = %#v, want %#v", got, want)
	}
	// An empty text field is left out, so that the API names it missing.
	if got := plainOps["add-redirect"].body(url.Values{"uri": {" "}}); len(got) != 0 {
		t.Errorf("add-redirect with an empty uri = %#v, want {}", got)
	}
	if node := plainOps["approve-template"].node("7", url.Values{"template": {"a/b c"}}); node != "app/7/svcchat_templates/a%2Fb%20c/approve" {
		t.Errorf("approve-template node = %q", node)
	}
}

func TestEveryPlainOperationIsOfferedByAPageThatExists(t *testing.T) {
	t.Parallel()
	for name, op := range plainOps {
		if templates[op.page] == nil {
			t.Errorf("%s: page %q has no template", name, op.page)
		}
		b, err := templateFiles.ReadFile("templates/" + op.page + ".html")
		if err != nil || !strings.Contains(string(b), `plainFields $ "`+name+`"`) && !strings.Contains(string(b), `plainFields . "`+name+`"`) {
			t.Errorf("%s: page %q has no form for it", name, op.page)
		}
	}
}

func TestASnippetIsCutAtTheMarkersOfItsMatches(t *testing.T) {
	t.Parallel()
	got := snippetParts("the **webhook** carries a **signature**.")
	want := []snippetPart{{"the ", false}, {"webhook", true}, {" carries a ", false}, {"signature", true}, {".", false}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("snippetParts = %+v, want %+v", got, want)
	}
	if got := snippetParts("<b>not markup</b>"); len(got) != 1 || got[0].Matched || got[0].Text != "<b>not markup</b>" {
		t.Errorf("a passage without markers = %+v, want one plain run (the template escapes it)", got)
	}
}

// FuzzPlainFormBody: any form gives a JSON body with only the operation's
// fields, lists without empty items.
func FuzzPlainFormBody(f *testing.F) {
	f.Add("https://a.example/cb\nhttps://b", "x", "svcchat")
	f.Add(",,\n,", "", "")
	f.Fuzz(func(t *testing.T, uris, name, product string) {
		body := plainOps["create-app"].body(url.Values{"redirect_uris": {uris}, "name": {name}, "products": {product}, "extra": {"x"}})
		if _, err := json.Marshal(body); err != nil {
			t.Fatal(err)
		}
		for k := range body {
			if k != "name" && k != "redirect_uris" && k != "products" {
				t.Fatalf("field %q is not the operation's", k)
			}
		}
		for _, u := range body["redirect_uris"].([]string) {
			if u == "" || u != strings.TrimSpace(u) || strings.ContainsAny(u, ",\n") {
				t.Fatalf("list item %q", u)
			}
		}
	})
}
