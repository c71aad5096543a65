package hlo

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// nestedTupleModule builds tuple(tuple(…tuple(x)…)) depth deep.
func nestedTupleModule(depth int) (*Module, error) {
	b := NewBuilder("nested")
	v := b.Parameter(MakeShape(F32, 4), "x")
	for range depth {
		v = b.Tuple(v)
	}
	return b.Build(v)
}

// nestedShape is a tuple shape depth deep around f32[4].
func nestedShape(depth int) Shape {
	s := MakeShape(F32, 4)
	for range depth {
		s = MakeTuple(s)
	}
	return s
}

func wantNestingError(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrTupleNesting) {
		t.Fatalf("%s: got %v, want an error wrapping ErrTupleNesting", what, err)
	}
}

// TestTupleNestingAtTheLimit: MaxTupleDepth nested tuples build, verify, print and
// parse back.
func TestTupleNestingAtTheLimit(t *testing.T) {
	m, err := nestedTupleModule(MaxTupleDepth)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseModule(Print(m))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Entry.Root.Shape.Equal(nestedShape(MaxTupleDepth)) {
		t.Fatalf("root shape %v after the round trip", back.Entry.Root.Shape)
	}
}

// TestTupleNestingOverTheLimit: one level more, or 20,000 levels (which did not
// finish: every instruction held and printed its whole shape, O(depth²)), is
// rejected by the builder, the verifier and the parser, which never recurses
// deeper than the limit (5,000,000 parentheses overflowed the goroutine stack).
func TestTupleNestingOverTheLimit(t *testing.T) {
	for _, depth := range []int{MaxTupleDepth + 1, 20000} {
		_, err := nestedTupleModule(depth)
		wantNestingError(t, "builder", err)
	}

	m, err := nestedTupleModule(MaxTupleDepth)
	if err != nil {
		t.Fatal(err)
	}
	m.Entry.Root.Shape = nestedShape(MaxTupleDepth + 1) // a broken pass would do this
	wantNestingError(t, "verifier", Verify(m))

	deep := strings.Repeat("(", 5_000_000) + "f32[]" + strings.Repeat(")", 5_000_000)
	_, err = ParseModule("HloModule m\nENTRY %e (x: " + deep + ") -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n")
	wantNestingError(t, "parser", err)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Col != 14+MaxTupleDepth {
		t.Fatalf("got %v, want a parse error at the tuple past the limit (2:%d)", err, 14+MaxTupleDepth)
	}
}

// TestTupleSizeLimit: a tuple of itself doubled 40 times has 2⁴⁰ leaves in 40 lines
// of Go; copying it did not finish. The builder refuses it as a tuple result, a
// parameter and a constant.
func TestTupleSizeLimit(t *testing.T) {
	b := NewBuilder("doubling")
	v := b.Parameter(Scalar(F32), "x")
	for range 40 {
		v = b.Tuple(v, v)
	}
	wantNestingError(t, "tuple", b.Err())

	s := Scalar(F32)
	for range 40 {
		s = MakeTuple(s, s)
	}
	b = NewBuilder("parameter")
	b.Parameter(s, "p")
	wantNestingError(t, "parameter", b.Err())

	lit := NewLiteral(Scalar(F32))
	for range 40 {
		lit = TupleLiteral(lit, lit)
	}
	b = NewBuilder("constant")
	b.Constant(lit)
	wantNestingError(t, "constant", b.Err())
}

// TestDeepArrayLiteralParsesInLinearMemory: a constant of rank r is r nested
// braces; the parser printed the shape at every level, O(r²) bytes (rank 4000, 24 KB
// of text: 9 s). Measured in bytes allocated, not in time.
func TestDeepArrayLiteralParsesInLinearMemory(t *testing.T) {
	text := rankOneConstant(2000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseModule(text)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(200*len(text)); got > bound {
		t.Fatalf("parsing %d bytes of text allocated %d bytes, over %d", len(text), got, bound)
	}
}

// TestDeepArrayLiteralDoesNotOverflowTheStack: a constant of rank two million (12 MB
// of text) is two million nested braces; the parser recursed once per brace and
// overflowed the goroutine stack (a fatal error, not a panic it could recover).
func TestDeepArrayLiteralDoesNotOverflowTheStack(t *testing.T) {
	m, err := ParseModule(rankOneConstant(2_000_000))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Entry.Root.Attrs.Literal.Shape().Rank(); got != 2_000_000 {
		t.Fatalf("rank %d", got)
	}
}

// rankOneConstant is a module returning a constant f32[1,1,…,1] of the given rank.
func rankOneConstant(rank int) string {
	dims := strings.TrimSuffix(strings.Repeat("1,", rank), ",")
	return "HloModule m\nENTRY %e () -> f32[" + dims + "] {\n  ROOT %c = f32[" + dims + "] constant(" +
		strings.Repeat("{", rank) + "1" + strings.Repeat("}", rank) + ")\n}\n"
}
