package docsearch

import (
	"strings"
	"testing"

	svcroot "github.com/svcplatform/svc"
)

func TestAFileIsSplitAtItsHeadingsWithGitHubAnchors(t *testing.T) {
	t.Parallel()
	md := "Intro text.\n# Writing a plugin\nFirst.\n## 1. Describe the API\nProto.\n```sh\n# not a heading\n```\n## Events ##\nOutbox.\n## Events\nAgain.\n#nospace\n"
	got := Sections("docs/PLUGINS.md", []byte(md))
	want := []struct{ path, title, body string }{
		{"docs/PLUGINS.md", "docs/PLUGINS.md", "Intro text."},
		{"docs/PLUGINS.md#writing-a-plugin", "Writing a plugin", "First."},
		{"docs/PLUGINS.md#1-describe-the-api", "1. Describe the API", "Proto.\n# not a heading"},
		{"docs/PLUGINS.md#events", "Events", "Outbox."},
		{"docs/PLUGINS.md#events-1", "Events", "Again.\n#nospace"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d sections: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Path != w.path || got[i].Title != w.title || got[i].Body != w.body || got[i].Kind != "doc" {
			t.Errorf("section %d: %+v, want %+v", i, got[i], w)
		}
	}
}

func TestTheEmbeddedDocsAreIndexedByHeading(t *testing.T) {
	t.Parallel()
	entries, err := DocEntries(svcroot.Docs)
	if err != nil {
		t.Fatal(err)
	}
	var readme, plugins bool
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			t.Errorf("path %s twice", e.Path)
		}
		seen[e.Path] = true
		readme = readme || strings.HasPrefix(e.Path, "README.md#")
		plugins = plugins || strings.HasPrefix(e.Path, "docs/PLUGINS.md#")
	}
	if !readme || !plugins {
		t.Fatalf("README.md or docs/PLUGINS.md sections missing from %d entries", len(entries))
	}
}

func FuzzSections(f *testing.F) {
	for _, s := range []string{"# a\nb", "```\n# x\n", "###### six\n####### seven", "  # indented\n    # code", "# #\n#", "# é ü\n# é ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		seen := map[string]bool{}
		for _, e := range Sections("f.md", []byte(md)) {
			if seen[e.Path] {
				t.Fatalf("%q: path %q twice", md, e.Path)
			}
			seen[e.Path] = true
			if !strings.HasPrefix(e.Path, "f.md") || e.Title == "" {
				t.Fatalf("%q: bad entry %+v", md, e)
			}
		}
	})
}

func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"", " ", "webhook", "\"signed body\" -retry", strings.Repeat("a", 201), "€", "!!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		err := CheckQuery(q)
		if n := len([]rune(q)); n > MaxQueryLength && err == nil {
			t.Fatalf("%d characters accepted", n)
		}
		if err != nil && !strings.Contains(err.Error(), "q") {
			t.Fatalf("refusal does not name q: %v", err)
		}
	})
}

// TestSectionsAreIndexedAsTheTextAReaderSees checks issue 28 item 8: the
// search shows and highlights what a reader of the docs sees, not their
// Markdown: no emphasis, code or link syntax, no list, quote or table
// marks, no HTML comments (notes for the docs' tooling), and no "**" left
// to be taken for the search's highlight marks.
func TestSectionsAreIndexedAsTheTextAReaderSees(t *testing.T) {
	t.Parallel()
	md := "## The `limit` **parameter**\n" +
		"- **One row per conversation is the lock.** See [the contract](../shared/CONTRACT.md#2) and ![a diagram](d.png).\n" +
		"1. `node` first\n" +
		"> quoted __note__\n" +
		"<!-- table-placement:begin -->\n" +
		"| table | placement |\n|---|:---:|\n| `book.posts` | page |\n" +
		"<!-- table-placement:end\nacross lines -->\n" +
		"```sh\ncurl -F 'batch=[…]' **/*.go\n```\n"
	got := Sections("docs/X.md", []byte(md))
	if len(got) != 1 {
		t.Fatalf("sections %+v", got)
	}
	want := "One row per conversation is the lock. See the contract and a diagram.\n" +
		"node first\nquoted note\ntable placement\nbook.posts page\ncurl -F 'batch=[…]' */*.go"
	if got[0].Title != "The limit parameter" || got[0].Body != want {
		t.Fatalf("title %q body %q,\nwant body %q", got[0].Title, got[0].Body, want)
	}
	entries, err := DocEntries(svcroot.Docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Body, "**") || strings.Contains(e.Body, "<!--") || strings.Contains(e.Title, "`") {
			t.Errorf("%s keeps Markdown: %.120q", e.Path, e.Body)
		}
	}
}
