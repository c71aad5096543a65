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
func testTarget(t *testing.T) plan.Target {
	d, err := targets.Builtin("lavapipe")
	if err != nil {
		t.Fatal(err)
	}
	return d.Plan()
}

// budgetOf reads a "// budget: BYTES" line from a test module (0: none).
func budgetOf(t *testing.T, text string) int64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "// budget: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatalf("budget line %q: %v", line, err)
			}
			return n
		}
	}
	return 0
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
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := hlo.ParseModule(string(src))
			if err != nil {
				t.Fatal(err)
			}
			p, err := plan.Build(m, testTarget(t), plan.Options{MemoryBudget: budgetOf(t, string(src))})
			if err != nil {
				t.Fatal(err)
			}
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
