package gomlx

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/backends"
)

// structural are the builder methods that build no op.
var structural = []string{"Compile", "Name", "OpShape", "DistributedSPMD", "DistributedAutoSharding", "DeviceAssignment"}

// notImplementedMethods are the methods that return GoMLX's not-implemented
// error (notImplementedOps lists their op types).
var notImplementedMethods = []string{"AllReduce", "Complex", "Conj", "FFT", "Imag", "Real"}

// TestOpTableDocumented: docs/gomlx.md's op table has one row per method of
// GoMLX's builder interface, says "not implemented" exactly for those that are,
// and its counts line holds.
func TestOpTableDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/gomlx.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| ([^|]+)\\|")
	rows := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		if _, dup := rows[m[1]]; dup {
			t.Errorf("%s has two rows", m[1])
		}
		rows[m[1]] = strings.TrimSpace(m[2])
	}
	it := reflect.TypeOf((*backends.Builder)(nil)).Elem()
	var ops, missing []string
	for i := range it.NumMethod() {
		name := it.Method(i).Name
		if contains(structural, name) {
			continue
		}
		ops = append(ops, name)
		status, ok := rows[name]
		switch {
		case !ok:
			missing = append(missing, name)
		case contains(notImplementedMethods, name) != strings.HasPrefix(status, "not implemented"):
			t.Errorf("%s: documented as %q", name, status)
		}
		delete(rows, name)
	}
	if len(missing) > 0 || len(rows) > 0 {
		t.Errorf("op table: missing %v, not in the interface %v", missing, rows)
	}
	counts := fmt.Sprintf("%d ops: %d built as vkxla HLO, %d not implemented", len(ops),
		len(ops)-len(notImplementedMethods), len(notImplementedMethods))
	if !strings.Contains(string(doc), counts) {
		t.Errorf("docs/gomlx.md lacks the counts line %q", counts)
	}
}

// TestNotImplementedOps: each not-implemented method returns GoMLX's
// not-implemented error naming the op, and the capabilities leave it out.
func TestNotImplementedOps(t *testing.T) {
	b := testBackend(t)
	bl := b.Builder("c")
	x, err := bl.Parameter("x", shapesF32(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Complex":   func() error { _, err := bl.Complex(x, x); return err },
		"Conj":      func() error { _, err := bl.Conj(x); return err },
		"Real":      func() error { _, err := bl.Real(x); return err },
		"Imag":      func() error { _, err := bl.Imag(x); return err },
		"FFT":       func() error { _, err := bl.FFT(x, backends.FFTForward, []int{2}); return err },
		"AllReduce": func() error { _, err := bl.AllReduce([]backends.Op{x}, backends.ReduceOpSum, nil); return err },
	}
	names := make([]string, 0, len(calls))
	for name, call := range calls {
		names = append(names, name)
		err := call()
		if !errors.Is(err, errNotImplemented()) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, notImplementedMethods) {
		t.Errorf("checked %v, want %v", names, notImplementedMethods)
	}
	caps := b.Capabilities()
	for op := range notImplementedOps {
		if caps.Operations[op] {
			t.Errorf("capabilities list %s", op)
		}
	}
	if !caps.Operations[backends.OpTypeConvGeneral] || !caps.Operations[backends.OpTypeRNGBitGenerator] {
		t.Error("capabilities leave out built ops")
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
