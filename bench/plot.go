package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Bar is one program of the model plot: its GFLOP/s, the same run's sgemm
// GFLOP/s, and the round median of their ratio (PairResult.RoundShare).
type Bar struct {
	Name              string
	GFLOPs, SgemmFLOP float64
	Share             float64
}

// Bars are the plot's bars of measured pairs.
func Bars(rs []PairResult) []Bar {
	bars := make([]Bar, len(rs))
	for i, r := range rs {
		bars[i] = Bar{Name: r.Name, GFLOPs: r.ProgramFigure(), SgemmFLOP: r.ReferenceFigure(), Share: r.RoundShare()}
	}
	return bars
}

// ModelPlot draws the model suite as an SVG bar chart: per program, its GFLOP/s
// as a % of the same run's sgemm GFLOP/s on a logarithmic axis from 0.1% to 100%
// (1000% if a program beats the sgemm), the value written at the bar's end, and
// title as the heading (device, date, commit).
func ModelPlot(title string, rs []Bar) []byte {
	const (
		w, left, right = 960, 300, 90
		top, rowH, gap = 50, 26, 8
		lo             = 0.1 // % of sgemm at the axis' start
	)
	hi := 100.0
	for _, r := range rs {
		if 100*r.Share > hi {
			hi = 1000
		}
	}
	h := top + len(rs)*(rowH+gap) + 50
	chartW := float64(w - left - right)
	x := func(pct float64) float64 {
		pct = math.Min(math.Max(pct, lo), hi)
		return left + chartW*math.Log10(pct/lo)/math.Log10(hi/lo)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&sb, `<text x="10" y="20" font-size="15">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&sb, `<text x="10" y="38">GFLOP/s as %% of the same run's sgemm %d³ (median over interleaved rounds; log scale)</text>`+"\n", SuiteGemm)
	for i, r := range rs {
		y := top + i*(rowH+gap)
		pct := 100 * r.Share
		fmt.Fprintf(&sb, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+rowH/2+4, html.EscapeString(r.Name))
		fmt.Fprintf(&sb, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="#4a7bb7"><title>%s: %s GFLOP/s, sgemm %s GFLOP/s</title></rect>`+"\n",
			left, y, x(pct)-left, rowH, html.EscapeString(r.Name), num(r.GFLOPs), num(r.SgemmFLOP))
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d">%s%%</text>`+"\n", x(pct)+4, y+rowH/2+4, num(pct))
	}
	base := top + len(rs)*(rowH+gap)
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top-4, left, base)
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", left, base, x(hi), base)
	for pct := lo; pct <= hi*1.001; pct *= 10 {
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#bbb" stroke-dasharray="3 3"/>`+"\n", x(pct), top-4, x(pct), base)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">%s%%</text>`+"\n", x(pct), base+16, num(pct))
	}
	sb.WriteString("</svg>\n")
	return []byte(sb.String())
}
