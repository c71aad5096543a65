package plan_test

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/hlo"
	"github.com/vkxla/vkxla/plan"
	"github.com/vkxla/vkxla/targets"
)

var update = flag.Bool("update", false, "rewrite the golden plan files")

// testTarget is the built-in lavapipe profile's (the CI device's) facts.
func testTarget(t testing.TB) plan.Target {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	return d.Plan()
}

// budgetOf reads a "// budget: BYTES" line from a test module (0: none).
func budgetOf(t *testing.T, text string) int64 {
	ns := intsOf(t, text, "budget")
	if len(ns) == 0 {
		return 0
	}
	return int64(ns[0])
}

// intsOf reads a "// key: N N …" line from a test module (nil: none).
func intsOf(t *testing.T, text, key string) []int {
	for _, line := range strings.Split(text, "\n") {
		v, ok := strings.CutPrefix(line, "// "+key+": ")
		if !ok {
			continue
		}
		var ns []int
		for _, f := range strings.Fields(v) {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s line %q: %v", key, line, err)
			}
			ns = append(ns, n)
		}
		return ns
	}
	return nil
}

// optionsOf are a test module's plan options: "// budget: BYTES", "// donate: P …"
// and "// borrow: P …" lines.
func optionsOf(t *testing.T, text string) plan.Options {
	return plan.Options{MemoryBudget: budgetOf(t, text), Donate: intsOf(t, text, "donate"), Borrow: intsOf(t, text, "borrow")}
}

// TestGoldenPlans plans every testdata/golden/*.hlo for lavapipe and compares the
// plan's text with the .plan file beside it (go test -update rewrites them). The
// text is the plan the runtime records: steps, buffers with offsets and
// lifetimes, statistics, live at the peak.
func TestGoldenPlans(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.hlo")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden modules (%v)", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".hlo"), func(t *testing.T) {
			p := planFile(t, f, testTarget(t), func(src string) plan.Options { return optionsOf(t, src) })
			got := hlo.Print(p.Module) + "\n" + p.String()
			golden := strings.TrimSuffix(f, ".hlo") + ".plan"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("plan of %s differs from %s (go test -update rewrites it); got:\n%s", f, golden, got)
			}
		})
	}
}

// planFile plans the HLO text file path for target with the options opts picks
// from its text (nil: none), failing t on any error.
func planFile(t *testing.T, path string, target plan.Target, opts func(src string) plan.Options) *plan.Plan {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := hlo.ParseModule(string(src))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var o plan.Options
	if opts != nil {
		o = opts(string(src))
	}
	p, err := plan.Build(m, target, o)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}
