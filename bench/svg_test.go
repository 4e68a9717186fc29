package bench

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// svgDoc is what the tests read back from a drawn chart.
type svgDoc struct {
	plots  []rectAttr // the plot areas, in panel order
	points [][]float64
	texts  []string
	lines  int // polylines
}

type rectAttr struct{ x, y, w, h float64 }

// decodeSVG parses the chart with encoding/xml: it must be well-formed.
func decodeSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(data))
	depth, inText := 0, false
	var sawRoot bool
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, data)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			depth++
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			num := func(k string) float64 {
				v, err := strconv.ParseFloat(attr[k], 64)
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("<%s %s=%q>: not a finite number", el.Name.Local, k, attr[k])
				}
				return v
			}
			switch {
			case el.Name.Local == "svg":
				sawRoot = el.Name.Space == "http://www.w3.org/2000/svg" && depth == 1
			case el.Name.Local == "rect" && attr["class"] == "plot":
				doc.plots = append(doc.plots, rectAttr{num("x"), num("y"), num("width"), num("height")})
			case el.Name.Local == "circle":
				doc.points = append(doc.points, []float64{float64(len(doc.plots) - 1), num("cx"), num("cy")})
			case el.Name.Local == "polyline":
				doc.lines++
			case el.Name.Local == "text":
				inText = true
			}
		case xml.EndElement:
			depth--
			inText = false
		case xml.CharData:
			if inText {
				doc.texts = append(doc.texts, string(el))
			}
		}
	}
	if !sawRoot {
		t.Fatal("no <svg> root in the SVG namespace")
	}
	return doc
}

func drawn(t *testing.T, c *Chart) svgDoc {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return decodeSVG(t, b.Bytes())
}

func curvesChart() *Chart {
	conns := []float64{1, 8, 32, 64, 128}
	return &Chart{Title: "Graph read <page/…/posts> & pgbench", Subtitle: "2 CPUs", Panels: []Panel{
		{Title: "throughput", XLabel: "connections", YLabel: "req/s", XTicks: conns, Series: []Series{
			{Name: "ours", Points: []Point{{1, 900}, {8, 3500}, {32, 4200}, {64, 4300}, {128, 4100}}},
			{Name: "pgbench, same SQL", Dashed: true, Points: []Point{{1, 4000}, {8, 25000}, {32, 30000}, {64, 29000}, {128, 27000}}},
		}},
		{Title: "p99", XLabel: "connections", YLabel: "ms", XTicks: conns, Series: []Series{
			{Name: "ours", Points: []Point{{1, 1.2}, {8, 4}, {32, 12}, {64, 39}, {128, math.NaN()}}},
			{Name: "pgbench, same SQL", Dashed: true, Points: []Point{{1, 0.3}, {8, 0.6}, {256, 1}, {64, -1}, {128, math.Inf(1)}}},
		}},
	}}
}

func TestChartIsWellFormedSVGWithTheLegendNames(t *testing.T) {
	doc := drawn(t, curvesChart())
	all := strings.Join(doc.texts, "\n")
	for _, want := range []string{"Graph read <page/…/posts> & pgbench", "ours", "pgbench, same SQL", "throughput", "p99", "req/s", "connections", "128"} {
		if !strings.Contains(all, want) {
			t.Errorf("no text %q in the chart; texts: %q", want, doc.texts)
		}
	}
	if len(doc.plots) != 2 {
		t.Fatalf("%d plot areas, want 2", len(doc.plots))
	}
	if doc.lines != 4 {
		t.Errorf("%d lines, want 4 (two series of two panels)", doc.lines)
	}
}

func TestChartPointsLieInsideTheirPlotArea(t *testing.T) {
	doc := drawn(t, curvesChart())
	// 5 + 5 valid points in the first panel; 4 + 2 in the second (NaN,
	// infinite, negative and off-axis values are gaps, never drawn).
	if len(doc.points) != 16 {
		t.Fatalf("%d points drawn, want 16", len(doc.points))
	}
	for _, p := range doc.points {
		r := doc.plots[int(p[0])]
		if p[1] < r.x-0.1 || p[1] > r.x+r.w+0.1 || p[2] < r.y-0.1 || p[2] > r.y+r.h+0.1 {
			t.Errorf("point (%v, %v) outside its plot %+v", p[1], p[2], r)
		}
	}
}

func TestChartXAxisIsLogarithmic(t *testing.T) {
	c := &Chart{Panels: []Panel{{XTicks: []float64{1, 8, 64}, Series: []Series{{Name: "s", Points: []Point{{1, 1}, {8, 1}, {64, 1}}}}}}}
	doc := drawn(t, c)
	if len(doc.points) != 3 {
		t.Fatalf("%d points", len(doc.points))
	}
	// 1 → 8 and 8 → 64 are the same factor, so the same distance.
	d1, d2 := doc.points[1][1]-doc.points[0][1], doc.points[2][1]-doc.points[1][1]
	if d1 <= 0 || math.Abs(d1-d2) > 0.2 {
		t.Errorf("x distances %v and %v, want equal and positive", d1, d2)
	}
	r := doc.plots[0]
	if math.Abs(doc.points[0][1]-r.x) > 0.1 || math.Abs(doc.points[2][1]-(r.x+r.w)) > 0.1 {
		t.Errorf("the smallest and largest x are not at the plot's edges: %v in %+v", doc.points, r)
	}
}

func TestNiceAxisCoversTheLargestValue(t *testing.T) {
	for _, ymax := range []float64{0, 0.3, 1, 7, 42, 99.9, 100, 4321, 29999, 1e9, 5e-324, math.MaxFloat64} {
		step, top := niceAxis(ymax)
		if !(step > 0) || top < ymax || top/step > 12.0001 {
			t.Errorf("niceAxis(%v) = step %v, top %v", ymax, step, top)
		}
	}
}

func FuzzChartSVG(f *testing.F) {
	f.Add("ours", "pgbench <same SQL> & \"x\"", 1.0, 900.0, 128.0, 4100.0)
	f.Add("\x00\xff\ufffe", "", 0.0, -1.0, math.Inf(1), math.NaN())
	f.Add("a", "b", 5e-324, 1.7976931348623157e308, 64.0, 0.0)
	f.Fuzz(func(t *testing.T, name1, name2 string, x1, y1, x2, y2 float64) {
		c := &Chart{Title: name1, Subtitle: name2, Panels: []Panel{{Title: name2, XLabel: name1, YLabel: name2,
			XTicks: []float64{1, 8, 32, 64, 128, x1}, Series: []Series{
				{Name: name1, Points: []Point{{x1, y1}, {x2, y2}, {8, y1}}},
				{Name: name2, Dashed: true, Points: []Point{{x2, y2}, {32, y2}}},
			}}}}
		doc := drawn(t, c)
		for _, p := range doc.points {
			r := doc.plots[int(p[0])]
			if p[1] < r.x-0.1 || p[1] > r.x+r.w+0.1 || p[2] < r.y-0.1 || p[2] > r.y+r.h+0.1 {
				t.Errorf("point (%v, %v) outside its plot %+v", p[1], p[2], r)
			}
		}
	})
}
