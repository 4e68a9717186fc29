package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Chart is a grid of line charts drawn as one SVG image: one panel per
// measure of a scenario (throughput, p99, …), each with a log₂ x axis
// (connections 1 … 128) and a linear y axis from zero, so that a reader sees
// at a glance where our line leaves the reference's. No plotting library:
// the drawing is a few rectangles, lines, polylines and texts.
type Chart struct {
	// Title and Subtitle head the image (the subtitle: machine and date).
	Title, Subtitle string
	// Columns is the number of panels per row (default 2).
	Columns int
	Panels  []Panel
}

// Panel is one line chart.
type Panel struct {
	Title  string
	XLabel string
	YLabel string
	// XTicks are the x values marked on the axis; the smallest and largest
	// bound it. They must be positive (the axis is logarithmic).
	XTicks []float64
	Series []Series
}

// Series is one line of a panel; points outside the x axis or with a
// non-finite or negative y are left out (a missing measurement is a gap,
// never a zero).
type Series struct {
	Name   string
	Points []Point
	// Dashed draws the line dashed (the reference, say).
	Dashed bool
}

// Point is one measurement.
type Point struct{ X, Y float64 }

// Geometry of one panel, in SVG user units.
const (
	svgPanelW  = 460.0
	svgPanelH  = 290.0
	svgHeaderH = 64.0
	svgMarginL = 64.0 // y tick labels and the y label
	svgMarginR = 16.0
	svgMarginT = 46.0 // panel title and legend
	svgMarginB = 44.0 // x tick labels and the x label
)

var svgColors = []string{"#1f5fa8", "#d9730d", "#2e8b57", "#8e44ad", "#c0392b"}

// WriteSVG draws c. The output is a standalone SVG 1.1 document.
func (c *Chart) WriteSVG(w io.Writer) error {
	cols := c.Columns
	if cols <= 0 {
		cols = 2
	}
	rows := (len(c.Panels) + cols - 1) / cols
	width := float64(cols) * svgPanelW
	height := svgHeaderH + float64(rows)*svgPanelH
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%s" height="%s" viewBox="0 0 %s %s" font-family="sans-serif" font-size="12">`+"\n",
		f1(width), f1(height), f1(width), f1(height))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", f1(width), f1(height))
	text(&b, 16, 26, "start", `font-size="18" font-weight="bold"`, c.Title)
	text(&b, 16, 48, "start", `fill="#555555"`, c.Subtitle)
	for i, p := range c.Panels {
		x0 := float64(i%cols) * svgPanelW
		y0 := svgHeaderH + float64(i/cols)*svgPanelH
		p.draw(&b, x0, y0)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// draw writes the panel with its top-left corner at (x0, y0).
func (p *Panel) draw(b *bytes.Buffer, x0, y0 float64) {
	left, top := x0+svgMarginL, y0+svgMarginT
	w, h := svgPanelW-svgMarginL-svgMarginR, svgPanelH-svgMarginT-svgMarginB
	fmt.Fprintf(b, `<g class="panel">`+"\n")
	text(b, x0+svgMarginL, y0+16, "start", `font-size="13" font-weight="bold"`, p.Title)
	// The legend, one swatch and name per series, under the title.
	lx := x0 + svgMarginL
	for i, s := range p.Series {
		color := svgColors[i%len(svgColors)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 3"`
		}
		fmt.Fprintf(b, `<g class="legend"><line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"%s/>`,
			f1(lx), f1(y0+32), f1(lx+22), f1(y0+32), color, dash)
		text(b, lx+27, y0+36, "start", "", s.Name)
		b.WriteString("</g>\n")
		lx += 40 + 6.5*float64(len([]rune(s.Name)))
	}
	fmt.Fprintf(b, `<rect class="plot" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999999"/>`+"\n",
		f1(left), f1(top), f1(w), f1(h))

	xmin, xmax := xRange(p.XTicks)
	xAt := func(x float64) float64 {
		if xmax == xmin {
			return left + w/2
		}
		return left + w*(math.Log2(x)-math.Log2(xmin))/(math.Log2(xmax)-math.Log2(xmin))
	}
	inX := func(x float64) bool { return x >= xmin && x <= xmax && x > 0 && !math.IsInf(x, 0) }
	ymax := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if inX(pt.X) && validY(pt.Y) {
				ymax = max(ymax, pt.Y)
			}
		}
	}
	step, top1 := niceAxis(ymax)
	yAt := func(y float64) float64 { return top + h - h*(y/top1) }

	for _, x := range p.XTicks {
		if !inX(x) {
			continue
		}
		px := xAt(x)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>`+"\n", f1(px), f1(top), f1(px), f1(top+h))
		text(b, px, top+h+15, "middle", "", trimFloat(x))
	}
	for k := 0; k <= 12; k++ {
		y := float64(k) * step
		if y > top1*(1+1e-9) {
			break
		}
		py := yAt(y)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e5e5e5"/>`+"\n", f1(left), f1(py), f1(left+w), f1(py))
		text(b, left-6, py+4, "end", "", shortNum(y))
	}
	text(b, left+w/2, top+h+34, "middle", "", p.XLabel)
	cx, cy := x0+16, top+h/2
	text(b, cx, cy, "middle", fmt.Sprintf(`transform="rotate(-90 %s %s)"`, f1(cx), f1(cy)), p.YLabel)

	for i, s := range p.Series {
		color := svgColors[i%len(svgColors)]
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 3"`
		}
		var pts []string
		var marks bytes.Buffer
		for _, pt := range s.Points {
			if !inX(pt.X) || !validY(pt.Y) {
				continue
			}
			px, py := xAt(pt.X), yAt(pt.Y)
			pts = append(pts, f1(px)+","+f1(py))
			fmt.Fprintf(&marks, `<circle class="point" cx="%s" cy="%s" r="3" fill="%s"><title>`, f1(px), f1(py), color)
			escape(&marks, fmt.Sprintf("%s: %s at %s", s.Name, shortNum(pt.Y), trimFloat(pt.X)))
			marks.WriteString("</title></circle>\n")
		}
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n",
				strings.Join(pts, " "), color, dash)
		}
		b.Write(marks.Bytes())
	}
	b.WriteString("</g>\n")
}

func validY(y float64) bool { return y >= 0 && !math.IsInf(y, 0) && !math.IsNaN(y) }

// xRange is the smallest and largest positive finite tick (1 … 1 without any).
func xRange(ticks []float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, t := range ticks {
		if t > 0 && !math.IsInf(t, 0) {
			lo, hi = min(lo, t), max(hi, t)
		}
	}
	if math.IsInf(lo, 1) {
		return 1, 1
	}
	return lo, hi
}

// niceAxis picks a y tick step of 1, 2 or 5 × 10ⁿ giving at most about six
// ticks, and the axis top, a multiple of it at or above ymax.
func niceAxis(ymax float64) (step, top float64) {
	if !(ymax > 0) || math.IsInf(ymax, 0) {
		return 1, 1
	}
	raw := ymax / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if !(step > 0) || math.IsInf(step, 0) { // ymax so small that ymax/5 underflows
		return 1, 1
	}
	top = math.Ceil(ymax/step-1e-9) * step
	if top < ymax || math.IsInf(top, 0) {
		top = ymax
	}
	return step, top
}

// text writes a <text> element with s escaped.
func text(b *bytes.Buffer, x, y float64, anchor, attrs, s string) {
	if s == "" {
		return
	}
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="%s"`, f1(x), f1(y), anchor)
	if attrs != "" {
		b.WriteString(" " + attrs)
	}
	b.WriteString(">")
	escape(b, s)
	b.WriteString("</text>\n")
}

// escape writes s as XML character data, dropping what XML cannot hold
// (invalid UTF-8 and control characters).
func escape(b *bytes.Buffer, s string) {
	clean := strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		if r < 0x20 || (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	_ = xml.EscapeText(b, []byte(clean))
}

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// shortNum formats an axis value: 12k, 1.5k, 250, 2.5, 0.25.
func shortNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
