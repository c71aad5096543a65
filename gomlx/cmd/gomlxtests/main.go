// Command gomlxtests runs GoMLX's own backend-agnostic test packages on a GoMLX
// backend (vkxla by default, and a baseline such as simplego, "go") and reports
// passed, failed and skipped tests per package, with each skip's reason and each
// failure's first lines.
//
// GoMLX's test packages pick their backend with backends.New (GOMLX_BACKEND), but
// import only GoMLX's default backends. The runner builds a temporary module that
// holds a copy of GoMLX's source (from the module cache, at the backend module's
// version; go's -overlay may not replace files there) and replaces
// github.com/gomlx/gomlx with it, adds one file to each tested package, a blank
// import of github.com/vkxla/vkxla/gomlx, and replaces GoMLX's calls to
// xla.AutoInstall (a download of the XLA PJRT plugin, which the XLA backend
// alone needs) by nil. Nothing else in GoMLX changes.
//
//	go run ./cmd/gomlxtests -repo .. -backend vkxla -baseline go -out report.md
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// defaultPackages are GoMLX's backend-agnostic test packages: graph ops and
// gradients, tensors, contexts and checkpoints, layers, losses, metrics,
// optimizers and the training loop.
var defaultPackages = []string{
	"pkg/core/graph",
	"pkg/core/tensors",
	"pkg/ml/context",
	"pkg/ml/context/initializers",
	"pkg/ml/context/checkpoints",
	"pkg/ml/layers",
	"pkg/ml/layers/activations",
	"pkg/ml/layers/fnn",
	"pkg/ml/layers/kan",
	"pkg/ml/layers/lstm",
	"pkg/ml/layers/regularizers",
	"pkg/ml/train",
	"pkg/ml/train/losses",
	"pkg/ml/train/metrics",
	"pkg/ml/train/optimizers",
	"pkg/ml/train/optimizers/cosineschedule",
}

const gomlxModule = "github.com/gomlx/gomlx"

func main() {
	repo := flag.String("repo", "..", "the vkxla repository root")
	backend := flag.String("backend", "vkxla", "GOMLX_BACKEND for the run under test")
	baseline := flag.String("baseline", "go", "GOMLX_BACKEND of the baseline run (simplego is \"go\"); empty: none")
	pkgs := flag.String("pkgs", strings.Join(defaultPackages, ","), "GoMLX packages (paths inside github.com/gomlx/gomlx), comma-separated")
	run := flag.String("run", "", "go test -run pattern")
	timeout := flag.Duration("timeout", 20*time.Minute, "go test -timeout per package")
	out := flag.String("out", "", "write the markdown report here too")
	keep := flag.Bool("keep", false, "keep the temporary module")
	flag.Parse()
	if err := mainErr(*repo, *backend, *baseline, strings.Split(*pkgs, ","), *run, *timeout, *out, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "gomlxtests:", err)
		os.Exit(1)
	}
}

func mainErr(repo, backend, baseline string, pkgs []string, run string, timeout time.Duration, out string, keep bool) error {
	repo, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	mod, err := os.MkdirTemp("", "gomlxtests")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(mod)
	}
	full := make([]string, len(pkgs))
	for i, p := range pkgs {
		full[i] = gomlxModule + "/" + strings.TrimSpace(p)
	}
	if err := writeModule(mod, repo); err != nil {
		return err
	}
	if err := prepare(mod, full); err != nil {
		return err
	}
	var runs []*suiteRun
	for _, be := range []string{backend, baseline} {
		if be == "" {
			continue
		}
		r, err := runSuite(mod, be, full, run, timeout)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	var buf bytes.Buffer
	report(&buf, runs)
	os.Stdout.Write(buf.Bytes())
	if out != "" {
		return os.WriteFile(out, buf.Bytes(), 0o644)
	}
	return nil
}

// writeModule writes the temporary module: a copy of GoMLX's source, the backend
// and vkxla from the repository.
func writeModule(mod, repo string) error {
	src, err := gomlxSource(repo)
	if err != nil {
		return err
	}
	if err := copyTree(src, filepath.Join(mod, "gomlx")); err != nil {
		return err
	}
	gomod := fmt.Sprintf(`module gomlxtests

go 1.26.8

require (
	github.com/gomlx/gomlx v0.26.0
	github.com/vkxla/vkxla v0.0.0-00010101000000-000000000000
	github.com/vkxla/vkxla/gomlx v0.0.0-00010101000000-000000000000
)

replace github.com/gomlx/gomlx => ./gomlx

replace github.com/vkxla/vkxla => %s

replace github.com/vkxla/vkxla/gomlx => %s
`, repo, filepath.Join(repo, "gomlx"))
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	var sum []byte
	for _, f := range []string{filepath.Join(repo, "gomlx", "go.sum"), filepath.Join(src, "go.sum")} {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		sum = append(sum, b...)
	}
	return os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)
}

// gomlxSource is GoMLX's directory in the module cache, at the version the
// backend module requires.
func gomlxSource(repo string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", gomlxModule)
	cmd.Dir, cmd.Stderr = filepath.Join(repo, "gomlx"), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", gomlxModule, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// copyTree copies GoMLX's source, writable, without its docs and examples
// (no tested package imports them).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "docs" || rel == "examples" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// prepare adds the registering file to each package and patches the calls to
// xla.AutoInstall in the packages and in graphtest (their shared helper).
func prepare(mod string, pkgs []string) error {
	dirs := []string{filepath.Join(mod, "gomlx", "pkg", "core", "graph", "graphtest")}
	for _, p := range pkgs {
		dir := filepath.Join(mod, "gomlx", filepath.FromSlash(strings.TrimPrefix(p, gomlxModule+"/")))
		name, err := testPackageName(dir)
		if err != nil {
			return err
		}
		src := fmt.Sprintf("package %s\n\nimport _ \"github.com/vkxla/vkxla/gomlx\"\n", name)
		if err := os.WriteFile(filepath.Join(dir, "zz_vkxla_register_test.go"), []byte(src), 0o644); err != nil {
			return err
		}
		dirs = append(dirs, dir)
	}
	for _, d := range dirs {
		if err := patchAutoInstall(d); err != nil {
			return err
		}
	}
	return nil
}

// testPackageName is the external test package's name (pkg_test) of the package
// in dir: one exists or may be added, and it may import the backend without a
// cycle.
func testPackageName(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if name, ok := strings.CutPrefix(line, "package "); ok {
				return strings.TrimSpace(name) + "_test", nil
			}
		}
	}
	return "", fmt.Errorf("no Go package in %s", dir)
}

const autoInstall = "xla.AutoInstall()"

// patchAutoInstall replaces, in the Go files of dir, the calls to
// xla.AutoInstall by nil (the xla import stays used).
func patchAutoInstall(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if !bytes.Contains(src, []byte(autoInstall)) {
			continue
		}
		patched := bytes.ReplaceAll(src, []byte(autoInstall), []byte("func() error { _ = xla.AutoInstall; return nil }()"))
		if err := os.WriteFile(f, patched, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// event is one line of go test -json.
type event struct {
	Action, Package, Test, Output string
	Elapsed                       float64
}

type testResult struct {
	action string // pass, fail, skip
	output []string
}

type pkgResult struct {
	tests   map[string]*testResult
	outcome string // the package's own pass / fail / skip
	output  []string
	elapsed float64
}

type suiteRun struct {
	backend string
	pkgs    map[string]*pkgResult
	order   []string
	wall    time.Duration
}

func runSuite(mod, backend string, pkgs []string, run string, timeout time.Duration) (*suiteRun, error) {
	args := []string{"test", "-mod=mod", "-json", "-count=1", "-p=1", "-timeout=" + timeout.String()}
	if run != "" {
		args = append(args, "-run="+run)
	}
	cmd := exec.Command("go", append(args, pkgs...)...)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOMLX_BACKEND="+backend)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := parse(stdout, backend, pkgs)
	_ = cmd.Wait() // failing tests exit non-zero; the events say which
	r.wall = time.Since(start)
	fmt.Fprintf(os.Stderr, "gomlxtests: %s done in %v\n", backend, r.wall.Round(time.Second))
	return r, nil
}

func parse(rd io.Reader, backend string, pkgs []string) *suiteRun {
	r := &suiteRun{backend: backend, pkgs: map[string]*pkgResult{}, order: pkgs}
	for _, p := range pkgs {
		r.pkgs[p] = &pkgResult{tests: map[string]*testResult{}}
	}
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		p, ok := r.pkgs[e.Package]
		if !ok {
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				p.output = appendLimited(p.output, e.Output)
			case "pass", "fail", "skip":
				p.outcome, p.elapsed = e.Action, e.Elapsed
			}
			continue
		}
		t := p.tests[e.Test]
		if t == nil {
			t = &testResult{}
			p.tests[e.Test] = t
		}
		switch e.Action {
		case "output":
			t.output = appendLimited(t.output, e.Output)
		case "pass", "fail", "skip":
			t.action = e.Action
		}
	}
	return r
}

func appendLimited(xs []string, s string) []string {
	if len(xs) >= 400 {
		return xs
	}
	return append(xs, s)
}

type counts struct{ pass, fail, skip int }

func (p *pkgResult) counts() counts {
	var c counts
	for _, t := range p.tests {
		switch t.action {
		case "pass":
			c.pass++
		case "fail":
			c.fail++
		case "skip":
			c.skip++
		}
	}
	return c
}

// report writes the per-package table, the ratio against the baseline, and
// every failure and skip with its reason.
func report(w io.Writer, runs []*suiteRun) {
	fmt.Fprintf(w, "| package |")
	for _, r := range runs {
		fmt.Fprintf(w, " %s pass / fail / skip |", r.backend)
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "|---|")
	for range runs {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
	for _, p := range runs[0].order {
		fmt.Fprintf(w, "| %s |", strings.TrimPrefix(p, gomlxModule+"/"))
		for _, r := range runs {
			pr := r.pkgs[p]
			c := pr.counts()
			note := ""
			if pr.outcome == "fail" && c.fail == 0 {
				note = " (the test binary failed: " + reason(pr.output) + ")"
			}
			fmt.Fprintf(w, " %d / %d / %d%s |", c.pass, c.fail, c.skip, note)
		}
		fmt.Fprintln(w)
	}
	if len(runs) == 2 {
		base, got := 0, 0
		for _, p := range runs[0].order {
			for name, t := range runs[1].pkgs[p].tests {
				if t.action != "pass" {
					continue
				}
				base++
				if mine := runs[0].pkgs[p].tests[name]; mine != nil && mine.action == "pass" {
					got++
				}
			}
		}
		fmt.Fprintf(w, "\nOf the %d tests (subtests included) that pass on %s, %d pass on %s: %.1f %%.\n",
			base, runs[1].backend, got, runs[0].backend, 100*float64(got)/float64(max(base, 1)))
		lost(w, runs[0], runs[1])
	}
	var all counts
	for _, p := range runs[0].order {
		c := runs[0].pkgs[p].counts()
		all.pass, all.fail, all.skip = all.pass+c.pass, all.fail+c.fail, all.skip+c.skip
	}
	fmt.Fprintf(w, "\n%s in all: %d passed, %d failed, %d skipped (%.1f %% of those run pass).\n",
		runs[0].backend, all.pass, all.fail, all.skip, 100*float64(all.pass)/float64(max(all.pass+all.fail, 1)))
	for _, r := range runs {
		fmt.Fprintf(w, "\n%s: %v wall.\n", r.backend, r.wall.Round(time.Second))
	}
	details(w, runs[0])
}

// lost lists the tests that pass on the baseline and not on the backend.
func lost(w io.Writer, r, base *suiteRun) {
	for _, p := range r.order {
		var names []string
		for name, t := range base.pkgs[p].tests {
			if mine := r.pkgs[p].tests[name]; t.action == "pass" && (mine == nil || mine.action != "pass") {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "- passes on %s, not on %s: %s %s\n", base.backend, r.backend, strings.TrimPrefix(p, gomlxModule+"/"), n)
		}
	}
}

// details lists the top-level failures and every skip of a run with the lines
// that say why.
func details(w io.Writer, r *suiteRun) {
	fmt.Fprintf(w, "\n### %s: failures and skips\n\n", r.backend)
	for _, p := range r.order {
		pr := r.pkgs[p]
		names := make([]string, 0, len(pr.tests))
		for n := range pr.tests {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			t := pr.tests[n]
			if t.action == "pass" || (t.action == "fail" && hasFailedChild(pr, n)) {
				continue
			}
			fmt.Fprintf(w, "- %s %s **%s**: %s\n", strings.TrimPrefix(p, gomlxModule+"/"), n, t.action, reason(t.output))
		}
	}
}

func hasFailedChild(p *pkgResult, name string) bool {
	for n, t := range p.tests {
		if strings.HasPrefix(n, name+"/") && t.action == "fail" {
			return true
		}
	}
	return false
}

// reason is the most telling line of a test's output: an error, panic or skip
// message.
func reason(lines []string) string {
	for _, key := range []string{"not implemented", "panic:", "Error:", "vkxla", "SKIP", "skip", "Skip", "Wanted"} {
		for i, l := range lines {
			if strings.Contains(l, key) {
				s := strings.TrimSpace(l)
				if s == "Error:" || strings.HasSuffix(s, "Error:") {
					if i+1 < len(lines) {
						s += " " + strings.TrimSpace(lines[i+1])
					}
				}
				return clip(s)
			}
		}
	}
	return clip(firstLine(lines))
}

func firstLine(lines []string) string {
	for _, l := range lines {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "=== RUN") {
			return clip(s)
		}
	}
	return ""
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "|", "/")
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
