package plan_test

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
)

// TestSVG: the memory timeline of the chain module is well-formed XML with one bar
// per step and one for the inputs, exactly one red (peak) bar whose height is the
// lower bound, and the peak's live buffers named.
func TestSVG(t *testing.T) {
	src, err := os.ReadFile("testdata/golden/chain.hlo")
	if err != nil {
		t.Fatal(err)
	}
	m, err := hlo.ParseModule(string(src))
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(m, testTarget(t), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svg := string(p.SVG())
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v\n%s", err, svg)
			}
			break
		}
	}
	bars := strings.Count(svg, "<rect x=")
	if want := len(p.Main.Steps) + 1; bars != want {
		t.Errorf("%d bars, want %d (steps and the inputs)", bars, want)
	}
	if n := strings.Count(svg, `fill="#d62728"><title>`); n != 1 {
		t.Errorf("%d peak bars, want 1", n)
	}
	var peak int64
	for _, pt := range p.LiveBytes() {
		peak = max(peak, pt.Bytes)
	}
	if peak != p.Stats.LowerBoundBytes {
		t.Errorf("timeline peak %d, lower bound %d", peak, p.Stats.LowerBoundBytes)
	}
	for _, b := range p.LiveAtPeak {
		if !strings.Contains(svg, ">"+b.Name+" ") {
			t.Errorf("live buffer %s not named in the plot", b.Name)
		}
	}
}
