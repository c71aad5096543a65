package plan

import (
	"fmt"
	"html"
	"strings"

	"github.com/vkxla/vkxla/heapsim"
)

// SVG draws the plan's memory timeline: the live bytes at every step (one bar
// each, loop bodies and branches included, in execution order), the peak's bar in
// red with its bytes and step, the plan's size (PeakBytes) as a dashed line, and
// the buffers live at the peak named beside it, largest first. VKXLA_DUMP writes
// it as 11-memory.svg, `vkxla compile -plot` where asked.
func (p *Plan) SVG() []byte {
	pts := p.LiveBytes()
	const (
		w, h          = 960, 420
		left, right   = 80, 300 // the legend goes right of the chart
		top, bottom   = 40, 60
		chartW        = w - left - right
		chartH        = h - top - bottom
		maxLegendRows = 12
	)
	top64 := max(p.Stats.PeakBytes, p.Stats.LowerBoundBytes, 1)
	y := func(b int64) float64 { return top + chartH - float64(b)/float64(top64)*chartH }
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&sb, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&sb, `<text x="%d" y="20" font-size="15">%s: live device memory per step</text>`+"\n", left, html.EscapeString(p.Module.Name))
	bw := float64(chartW) / float64(max(len(pts), 1))
	peakAt := p.PeakAt()
	for i, pt := range pts {
		fill := "#4a7bb7"
		if pt.At == peakAt {
			fill = "#d62728"
		}
		x := left + float64(i)*bw
		label := fmt.Sprintf("@%d %s %s", pt.At, pt.Kind, pt.Step)
		if pt.At < 0 {
			label = pt.Step
		}
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d B</title></rect>`+"\n",
			x, y(pt.Bytes), max(bw-1, 0.5), top+chartH-y(pt.Bytes), fill, html.EscapeString(label), pt.Bytes)
	}
	// Axes, the plan's size and the scale.
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top+chartH, left+chartW, top+chartH)
	fmt.Fprintf(&sb, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", left, top, left, top+chartH)
	for _, frac := range []float64{0, 0.25, 0.5, 0.75, 1} {
		b := int64(frac * float64(top64))
		fmt.Fprintf(&sb, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y(b)+4, byteText(b))
	}
	fmt.Fprintf(&sb, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black" stroke-dasharray="4 3"/>`+"\n", left, y(p.Stats.PeakBytes), left+chartW, y(p.Stats.PeakBytes))
	fmt.Fprintf(&sb, `<text x="%d" y="%.1f" text-anchor="end">plan %s</text>`+"\n", left+chartW, y(p.Stats.PeakBytes)-4, byteText(p.Stats.PeakBytes))
	fmt.Fprintf(&sb, `<text x="%d" y="%d">steps in execution order (%d)</text>`+"\n", left, top+chartH+20, len(pts))
	// The peak and what is live there.
	lx := left + chartW + 16
	fmt.Fprintf(&sb, `<text x="%d" y="%d" fill="#d62728">peak %s at %s</text>`+"\n", lx, top+10, byteText(p.Stats.LowerBoundBytes), html.EscapeString(peakStep(pts, peakAt)))
	fmt.Fprintf(&sb, `<text x="%d" y="%d">live at the peak:</text>`+"\n", lx, top+30)
	for i, b := range p.LiveAtPeak {
		if i == maxLegendRows {
			fmt.Fprintf(&sb, `<text x="%d" y="%d">… %d more</text>`+"\n", lx, top+48+16*i, len(p.LiveAtPeak)-i)
			break
		}
		fmt.Fprintf(&sb, `<text x="%d" y="%d">%s %s (%s)</text>`+"\n", lx, top+48+16*i, html.EscapeString(b.Name), byteText(b.Bytes), b.Role)
	}
	sb.WriteString("</svg>\n")
	return []byte(sb.String())
}

// peakStep names the step at the peak position.
func peakStep(pts []heapsim.Point, at int) string {
	for _, pt := range pts {
		if pt.At == at {
			return pt.Step
		}
	}
	return "?"
}

// byteText prints a size in B, KiB, MiB or GiB.
func byteText(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
