package version

import "html/template"

var changelogPage = template.Must(template.New("changelog").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Changelog · svc developers</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1c1e21}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.5rem;border-bottom:1px solid #dadde1}
th{background:#f0f2f5}
.kind{white-space:nowrap}
</style>
</head>
<body>
<h1>Changelog</h1>
<p>Every release of the Graph API. Breaking changes ship only in a new major version; a version stays supported for at least 24 months after its successor ships. The same list is served as JSON at <a href="/api/v1/platform/changelog"><code>GET /api/v1/platform/changelog</code></a>.</p>
<table>
<thead><tr><th>Version</th><th>Date</th><th>Kind</th><th>Summary</th></tr></thead>
<tbody>
{{range .}}<tr><td>{{.Version}}</td><td>{{.Date}}</td><td class="kind">{{.Kind}}</td><td>{{.Summary}}</td></tr>
{{end}}</tbody>
</table>
</body>
</html>
`))
