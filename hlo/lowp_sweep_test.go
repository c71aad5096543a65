package hlo_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// TestLowPrecisionSweep takes every opcode's sample module, puts each
// low-precision type where it uses f32 (or s32 for integer-only ops), and checks
// that parsing, verifying and evaluating it in cpuref either works or fails with an
// error: bad or unsupported input never panics.
func TestLowPrecisionSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for op := hlo.Opcode(0); int(op) < hlo.NumOpcodes; op++ {
		text, ok := hlo.TextSampleFor(op)
		if !ok {
			continue
		}
		for _, dt := range hlo.LowPrecisionDTypes {
			from := "f32["
			if !strings.Contains(text, from) {
				from = "s32["
			}
			sweepOne(t, rng, op, dt, strings.ReplaceAll(text, from, dt.String()+"["))
		}
	}
	t.Logf("sample modules: %d refused by the parser or verifier, %d refused by cpuref, %d evaluated",
		sweepStats.refused, sweepStats.failed, sweepStats.ran)
}

var sweepStats struct{ refused, failed, ran int }

func sweepOne(t *testing.T, rng *rand.Rand, op hlo.Opcode, dt hlo.DType, text string) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%v on %v panicked: %v\n%s", op, dt, r, text)
		}
	}()
	m, err := hlo.ParseModule(text)
	if err != nil {
		sweepStats.refused++
		return // refused: fine
	}
	var inputs []*hlo.Literal
	for _, s := range m.Entry.ParamShapes() {
		inputs = append(inputs, randomBits(rng, s))
	}
	if _, err := cpuref.Eval(m, inputs...); err != nil { // an error is an answer; a panic is not
		sweepStats.failed++
		if testing.Verbose() {
			t.Logf("%v on %v: %v", op, dt, err)
		}
		return
	}
	sweepStats.ran++
}

// randomBits fills a literal (or tuple) with random raw bit patterns.
func randomBits(rng *rand.Rand, s hlo.Shape) *hlo.Literal {
	if s.IsTuple() {
		var elems []*hlo.Literal
		for _, e := range s.Elems {
			elems = append(elems, randomBits(rng, e))
		}
		return hlo.TupleLiteral(elems...)
	}
	l := hlo.NewLiteral(s)
	for i := range l.NumElements() {
		if s.DType == hlo.Pred {
			l.SetBool(i, rng.IntN(2) == 1)
			continue
		}
		l.SetBits(i, rng.Uint64())
	}
	return l
}
