// Package svgplot draws line charts as standalone SVG documents. It covers
// exactly what the bench tool needs (a few series over a shared linear x
// axis, axes from zero, a legend) so the repository needs no plotting
// dependency.
package svgplot

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Series is one line. Points whose X or Y is NaN or infinite are skipped.
type Series struct {
	Name  string
	X, Y  []float64
	Color string // any SVG color; a palette color when empty
}

// Chart is a line chart with both axes starting at zero.
type Chart struct {
	Title    string
	Subtitle string
	XLabel   string
	YLabel   string
	Width    int // pixels; 800 when zero
	Height   int // pixels; 450 when zero
	Series   []Series
}

// palette is colorblind-safe (Okabe-Ito).
var palette = []string{"#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

const (
	marginLeft   = 70
	marginRight  = 20
	marginTop    = 60
	marginBottom = 50
)

// Write renders the chart as an SVG document.
func (c *Chart) Write(w io.Writer) error {
	width, height := c.Width, c.Height
	if width <= 0 {
		width = 800
	}
	if height <= 0 {
		height = 450
	}
	pw := float64(width - marginLeft - marginRight)
	ph := float64(height - marginTop - marginBottom)
	if pw < 10 || ph < 10 {
		return fmt.Errorf("svgplot: %dx%d leaves no room for the plot", width, height)
	}

	xmax, ymax := 0.0, 0.0
	for _, s := range c.Series {
		for i := range min(len(s.X), len(s.Y)) {
			if finite(s.X[i]) && finite(s.Y[i]) {
				xmax = max(xmax, s.X[i])
				ymax = max(ymax, s.Y[i])
			}
		}
	}
	xstep, xtop := axis(xmax)
	ystep, ytop := axis(ymax)
	px := func(x float64) float64 { return marginLeft + min(x/xtop, 1)*pw }
	py := func(y float64) float64 { return marginTop + ph - min(y/ytop, 1)*ph }

	b := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }

	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	p(`<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	if c.Title != "" {
		p(`<text x="%d" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", marginLeft, esc(c.Title))
	}
	if c.Subtitle != "" {
		p(`<text x="%d" y="40" fill="#555555">%s</text>`+"\n", marginLeft, esc(c.Subtitle))
	}

	// Grid and tick labels.
	p(`<g stroke="#dddddd" stroke-width="1">` + "\n")
	for v := 0.0; v <= ytop+ystep/2; v += ystep {
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f(px(0)), f(py(v)), f(px(xtop)), f(py(v)))
	}
	for v := 0.0; v <= xtop+xstep/2; v += xstep {
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", f(px(v)), f(py(0)), f(px(v)), f(py(ytop)))
	}
	p("</g>\n")
	p(`<g fill="#333333">` + "\n")
	for v := 0.0; v <= ytop+ystep/2; v += ystep {
		p(`<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", f(px(0)-6), f(py(v)+4), esc(tick(v, ystep)))
	}
	for v := 0.0; v <= xtop+xstep/2; v += xstep {
		p(`<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", f(px(v)), f(py(0)+18), esc(tick(v, xstep)))
	}
	p("</g>\n")
	p(`<rect x="%d" y="%d" width="%s" height="%s" fill="none" stroke="#333333"/>`+"\n", marginLeft, marginTop, f(pw), f(ph))
	if c.XLabel != "" {
		p(`<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", f(marginLeft+pw/2), height-10, esc(c.XLabel))
	}
	if c.YLabel != "" {
		cy := marginTop + ph/2
		p(`<text x="16" y="%s" text-anchor="middle" transform="rotate(-90 16 %s)">%s</text>`+"\n", f(cy), f(cy), esc(c.YLabel))
	}

	// Lines, then the legend on top of them.
	for i, s := range c.Series {
		var pts []string
		for j := range min(len(s.X), len(s.Y)) {
			if finite(s.X[j]) && finite(s.Y[j]) {
				pts = append(pts, f(px(s.X[j]))+","+f(py(s.Y[j])))
			}
		}
		if len(pts) == 0 {
			continue
		}
		p(`<polyline fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round" points="%s"><title>%s</title></polyline>`+"\n",
			esc(color(s, i)), strings.Join(pts, " "), esc(s.Name))
	}
	lx, ly := float64(marginLeft+12), float64(marginTop+12)
	p(`<rect x="%s" y="%s" width="%s" height="%d" fill="#ffffff" fill-opacity="0.85" stroke="#bbbbbb"/>`+"\n",
		f(lx-6), f(ly-8), f(legendWidth(c.Series)), 18*len(c.Series)+6)
	for i, s := range c.Series {
		y := ly + float64(18*i)
		p(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3"/>`+"\n", f(lx), f(y+4), f(lx+22), f(y+4), esc(color(s, i)))
		p(`<text x="%s" y="%s">%s</text>`+"\n", f(lx+30), f(y+8), esc(s.Name))
	}
	p("</svg>\n")
	return b.Flush()
}

func color(s Series, i int) string {
	if s.Color != "" {
		return s.Color
	}
	return palette[i%len(palette)]
}

// legendWidth estimates the legend box from the longest name (about 7px a
// character at font-size 12).
func legendWidth(ss []Series) float64 {
	n := 0
	for _, s := range ss {
		n = max(n, len([]rune(s.Name)))
	}
	return 42 + 7*float64(n)
}

// axis picks a tick step of 1, 2 or 5 times a power of ten giving about
// five ticks, and the top of the axis as the first tick at or above vmax.
func axis(vmax float64) (step, top float64) {
	if !(vmax > 0) {
		return 1, 1
	}
	raw := vmax / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch r := raw / mag; {
	case r <= 1:
		step = mag
	case r <= 2:
		step = 2 * mag
	case r <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	// A value a hair above a round number (a sample taken at 8.0004 s)
	// should not add a whole empty tick; it is drawn on the edge instead.
	top = math.Ceil(vmax/step-0.001) * step
	return step, top
}

// tick formats an axis value with as many decimals as the step needs.
func tick(v, step float64) string {
	dec := 0
	if step < 1 {
		dec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func esc(s string) string {
	var sb strings.Builder
	xml.EscapeText(&sb, []byte(s)) // writing to a strings.Builder cannot fail
	return sb.String()
}
