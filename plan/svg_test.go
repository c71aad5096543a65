package plan_test

import (
	"encoding/xml"
	"os"
	"strings"
	"testing"
)

// TestSVG: the memory timeline of the chain module is well-formed XML with one bar
// per step and one for the inputs, exactly one red (peak) bar whose height is the
// lower bound, and the peak's live buffers named.
func TestSVG(t *testing.T) {
	p := planFile(t, "testdata/golden/chain.hlo", testTarget(t), nil)
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

// TestReadmePlot: the README's memory timeline (docs/img/memory-attention.svg) is
// the plot of testdata/programs/attention.hlo as the planner draws it today for
// lavapipe, what `vkxla compile -plot` writes; go test -update redraws it.
func TestReadmePlot(t *testing.T) {
	const (
		program = "../testdata/programs/attention.hlo"
		plot    = "../docs/img/memory-attention.svg"
	)
	p := planFile(t, program, testTarget(t), nil)
	got := p.SVG()
	if *update {
		if err := os.WriteFile(plot, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not the plot of %s today (go test ./plan -update redraws it); got:\n%s", plot, program, got)
	}
}
