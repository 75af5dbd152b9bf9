package svgplot

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// parse checks that doc is well-formed XML with an svg root and returns
// its elements in document order.
func parse(t *testing.T, doc []byte) []xml.StartElement {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	d.Strict = true
	var els []xml.StartElement
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (el.Name.Local != "svg" || el.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element is %v, want svg in the SVG namespace", el.Name)
			}
			depth++
			els = append(els, el.Copy())
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || len(els) == 0 {
		t.Fatalf("unbalanced or empty document (depth %d, %d elements)", depth, len(els))
	}
	return els
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func render(t *testing.T, c *Chart) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestWriteWellFormed(t *testing.T) {
	c := &Chart{
		Title:    `Heap <under> a "slow" broker & friends`,
		Subtitle: "100 ms per Produce",
		XLabel:   "seconds",
		YLabel:   "heap MiB",
		Series: []Series{
			{Name: "upstream <v0.4.51>", X: []float64{0, 1, 2, 3}, Y: []float64{0, 50, 100, 150}},
			{Name: "fork & N=4", X: []float64{0, 1, 2, 3}, Y: []float64{0, 20, 21, 20}},
			{Name: "franz-go", X: []float64{0, 1, 2, 3}, Y: []float64{0, 30, math.NaN(), 31}},
		},
	}
	doc := render(t, c)
	els := parse(t, doc)

	var lines []xml.StartElement
	for _, el := range els {
		if el.Name.Local == "polyline" {
			lines = append(lines, el)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("%d polylines, want one per series", len(lines))
	}
	// The NaN point is skipped, the others kept.
	if n := len(strings.Fields(attr(lines[2], "points"))); n != 3 {
		t.Errorf("franz-go line has %d points, want 3", n)
	}
	if bytes.Contains(doc, []byte("NaN")) || bytes.Contains(doc, []byte("Inf")) {
		t.Error("output contains NaN or Inf")
	}
	// Escaped text comes back intact through the decoder.
	if !bytes.Contains(doc, []byte("&lt;under&gt;")) || !bytes.Contains(doc, []byte("&amp; friends")) {
		t.Error("title not escaped")
	}

	// Every point lies inside the plot area, and a larger value is drawn
	// higher (smaller y).
	w, h := 800.0, 450.0
	for _, l := range lines {
		prevY := math.Inf(1)
		for i, pt := range strings.Fields(attr(l, "points")) {
			x, y, ok := strings.Cut(pt, ",")
			if !ok {
				t.Fatalf("bad point %q", pt)
			}
			fx, err1 := strconv.ParseFloat(x, 64)
			fy, err2 := strconv.ParseFloat(y, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad point %q", pt)
			}
			if fx < marginLeft || fx > w-marginRight || fy < marginTop || fy > h-marginBottom {
				t.Errorf("point %q outside the plot area", pt)
			}
			if l.Attr != nil && attr(l, "stroke") == palette[0] && i > 0 && fy >= prevY {
				t.Errorf("upstream line does not rise: y %v after %v", fy, prevY)
			}
			prevY = fy
		}
	}
}

func TestWriteEmptyAndDegenerate(t *testing.T) {
	for _, c := range []*Chart{
		{},
		{Series: []Series{{Name: "empty"}}},
		{Series: []Series{{Name: "zeros", X: []float64{0, 0}, Y: []float64{0, 0}}}},
		{Series: []Series{{Name: "mismatched", X: []float64{1, 2, 3}, Y: []float64{1}}}},
	} {
		doc := render(t, c)
		parse(t, doc)
		if bytes.Contains(doc, []byte("NaN")) {
			t.Errorf("NaN in output for %+v", c.Series)
		}
	}
	if err := (&Chart{Width: 50, Height: 50}).Write(io.Discard); err == nil {
		t.Error("tiny chart accepted")
	}
}

func TestAxis(t *testing.T) {
	for _, tc := range []struct{ max, step, top float64 }{
		{100, 20, 100},
		{101, 50, 150},
		{7.3, 2, 8},
		{0.042, 0.01, 0.05},
		{0, 1, 1},
		{1, 0.2, 1},
		{8.0004, 2, 8}, // a hair above a tick stays on it
		{8.1, 2, 10},
	} {
		step, top := axis(tc.max)
		if math.Abs(step-tc.step) > 1e-12 || math.Abs(top-tc.top) > 1e-12 {
			t.Errorf("axis(%v) = %v, %v; want %v, %v", tc.max, step, top, tc.step, tc.top)
		}
	}
	if got := tick(0.4, 0.2); got != "0.4" {
		t.Errorf("tick(0.4, 0.2) = %q", got)
	}
	if got := tick(150, 50); got != "150" {
		t.Errorf("tick(150, 50) = %q", got)
	}
}
