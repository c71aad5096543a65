package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTestPackageName(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a_test.go"), "package other_test\n")
	write(t, filepath.Join(dir, "a.go"), "// Package graph.\npackage graph\n\nfunc f() {}\n")
	name, err := testPackageName(dir)
	if err != nil || name != "graph_test" {
		t.Fatalf("testPackageName = %q, %v", name, err)
	}
	if _, err := testPackageName(t.TempDir()); err == nil {
		t.Fatal("an empty directory has a package name")
	}
}

func TestPatchAutoInstall(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nfunc init() {\n\terr := xla.AutoInstall()\n\t_ = err\n}\n"
	write(t, filepath.Join(dir, "x_test.go"), src)
	write(t, filepath.Join(dir, "y.go"), "package x\n")
	if err := patchAutoInstall(dir); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "x_test.go"))
	want := "package x\n\nfunc init() {\n\terr := func() error { _ = xla.AutoInstall; return nil }()\n\t_ = err\n}\n"
	if string(got) != want {
		t.Fatalf("patched:\n%s\nwant:\n%s", got, want)
	}
}

// TestParseAndReport feeds go test -json events of two runs and checks the
// table, the ratio, the lost tests and the reasons.
func TestParseAndReport(t *testing.T) {
	const p = "github.com/gomlx/gomlx/pkg/a"
	mine := `{"Action":"run","Package":"` + p + `","Test":"TestA"}
{"Action":"pass","Package":"` + p + `","Test":"TestA"}
{"Action":"output","Package":"` + p + `","Test":"TestB","Output":"    b_test.go:3: op FFT: not implemented\n"}
{"Action":"fail","Package":"` + p + `","Test":"TestB"}
{"Action":"output","Package":"` + p + `","Test":"TestC","Output":"--- SKIP: only 1 device\n"}
{"Action":"skip","Package":"` + p + `","Test":"TestC"}
{"Action":"fail","Package":"` + p + `"}
not json
`
	base := `{"Action":"pass","Package":"` + p + `","Test":"TestA"}
{"Action":"pass","Package":"` + p + `","Test":"TestB"}
{"Action":"pass","Package":"` + p + `"}
`
	r1 := parse(strings.NewReader(mine), "vkxla", []string{p})
	r2 := parse(strings.NewReader(base), "go", []string{p})
	var buf bytes.Buffer
	report(&buf, []*suiteRun{r1, r2})
	out := buf.String()
	for _, want := range []string{
		"| pkg/a | 1 / 1 / 1 | 2 / 0 / 0 |",
		"Of the 2 tests (subtests included) that pass on go, 1 pass on vkxla: 50.0 %.",
		"- passes on go, not on vkxla: pkg/a TestB",
		"vkxla in all: 1 passed, 1 failed, 1 skipped",
		"- pkg/a TestB **fail**: b_test.go:3: op FFT: not implemented",
		"- pkg/a TestC **skip**: --- SKIP: only 1 device",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
