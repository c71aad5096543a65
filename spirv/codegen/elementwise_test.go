package codegen

import (
	"fmt"
	"testing"

	"github.com/vkxla/vkxla/hlo"
)

var testDims = [][]int64{{}, {7}, {3, 130}, {2, 3, 4, 5}}

func TestUnaryAllTypes(t *testing.T) {
	for _, op := range hlo.AllOpcodes() {
		if op.Info().Kind != hlo.KindUnary {
			continue
		}
		for _, dt := range hlo.AllDTypes {
			if !op.Info().Types.Allows(dt) {
				continue
			}
			for _, dims := range testDims[:2] {
				t.Run(fmt.Sprintf("%v/%v/%v", op, dt, dims), func(t *testing.T) {
					b := newCB(t, "unary")
					x := b.param(s(dt, dims...))
					lowerOK(t, b.build(b.simple(op, x)))
				})
			}
		}
	}
}

func TestBinaryAllTypes(t *testing.T) {
	for _, op := range hlo.AllOpcodes() {
		if op.Info().Kind != hlo.KindBinary {
			continue
		}
		for _, dt := range hlo.AllDTypes {
			if !op.Info().Types.Allows(dt) {
				continue
			}
			t.Run(fmt.Sprintf("%v/%v", op, dt), func(t *testing.T) {
				b := newCB(t, "binary")
				x, y := b.param(s(dt, 3, 5)), b.param(s(dt, 3, 5))
				lowerOK(t, b.build(b.simple(op, x, y)))
			})
		}
	}
}

func TestElementwiseShapes(t *testing.T) {
	for _, dims := range append(testDims, []int64{0, 4}, []int64{1, 1, 300000}) {
		b := newCB(t, "shapes")
		x, y := b.param(s(hlo.F32, dims...)), b.param(s(hlo.F32, dims...))
		lowerOK(t, b.build(b.simple(hlo.OpAdd, x, y)))
	}
}

func TestCompare(t *testing.T) {
	for _, dt := range hlo.AllDTypes {
		types := []hlo.CompareType{hlo.CompareDefault}
		if dt.IsFloat() {
			types = append(types, hlo.CompareTotalOrder)
		}
		if dt.IsSigned() {
			types = append(types, hlo.CompareSigned)
		}
		if dt.IsUnsigned() || dt == hlo.Pred {
			types = append(types, hlo.CompareUnsigned)
		}
		for _, ct := range types {
			for dir := hlo.CmpEQ; dir <= hlo.CmpGE; dir++ {
				t.Run(fmt.Sprintf("%v/%v/%v", dt, ct, dir), func(t *testing.T) {
					b := newCB(t, "compare")
					x, y := b.param(s(dt, 4)), b.param(s(dt, 4))
					lowerOK(t, b.build(b.op(hlo.OpCompare, hlo.Attributes{Direction: dir, CompareType: ct}, nil, x, y)))
				})
			}
		}
	}
}

func TestConvertAllPairs(t *testing.T) {
	for _, from := range hlo.AllDTypes {
		for _, to := range hlo.AllDTypes {
			t.Run(fmt.Sprintf("%v_to_%v", from, to), func(t *testing.T) {
				b := newCB(t, "convert")
				x := b.param(s(from, 5))
				lowerOK(t, b.build(b.declared(hlo.OpConvert, s(to, 5), hlo.Attributes{}, x)))
			})
		}
	}
}

func TestBitcastConvert(t *testing.T) {
	for _, from := range hlo.AllDTypes {
		for _, to := range hlo.AllDTypes {
			if from == hlo.Pred || to == hlo.Pred {
				continue
			}
			dims := []int64{3}
			out := []int64{3}
			switch {
			case from.Bits() > to.Bits():
				out = append(out, int64(from.Bits()/to.Bits()))
			case from.Bits() < to.Bits():
				dims = append(dims, int64(to.Bits()/from.Bits()))
			}
			t.Run(fmt.Sprintf("%v_to_%v", from, to), func(t *testing.T) {
				b := newCB(t, "bitcast")
				x := b.param(s(from, dims...))
				lowerOK(t, b.build(b.declared(hlo.OpBitcastConvert, s(to, out...), hlo.Attributes{}, x)))
			})
		}
	}
}

func TestSelectClamp(t *testing.T) {
	for _, dt := range hlo.AllDTypes {
		t.Run(dt.String(), func(t *testing.T) {
			b := newCB(t, "select")
			p := b.param(s(hlo.Pred, 2, 3))
			x, y := b.param(s(dt, 2, 3)), b.param(s(dt, 2, 3))
			lowerOK(t, b.build(b.simple(hlo.OpSelect, p, x, y)))
			b = newCB(t, "select_scalar")
			p = b.param(s(hlo.Pred))
			x, y = b.param(s(dt, 2, 3)), b.param(s(dt, 2, 3))
			lowerOK(t, b.build(b.simple(hlo.OpSelect, p, x, y)))
			if !dt.IsNumeric() {
				return
			}
			b = newCB(t, "clamp")
			lo, hi := b.param(s(dt)), b.param(s(dt, 2, 3))
			x = b.param(s(dt, 2, 3))
			lowerOK(t, b.build(b.simple(hlo.OpClamp, lo, x, hi)))
		})
	}
}

// A chain of elementwise ops with constants: one kernel, one expression.
func TestFusedChain(t *testing.T) {
	b := newCB(t, "chain")
	x := b.param(s(hlo.F32, 1000))
	two := b.constant(hlo.ScalarLiteral[float32](2))
	arr := b.constant(hlo.MustFromSlice([]int64{4}, []float32{1, 2, 3, 4}))
	bx := b.declared(hlo.OpBroadcast, s(hlo.F32, 1000), hlo.Attributes{Dimensions: []int64{}}, two)
	y := b.simple(hlo.OpMultiply, x, bx)
	y = b.simple(hlo.OpTanh, y)
	y = b.simple(hlo.OpAdd, y, x)
	ba := b.declared(hlo.OpBroadcast, s(hlo.F32, 250, 4), hlo.Attributes{Dimensions: []int64{1}}, arr)
	r := b.declared(hlo.OpReshape, s(hlo.F32, 1000), hlo.Attributes{}, ba)
	y = b.simple(hlo.OpSubtract, y, r)
	p := lowerOK(t, b.build(y))
	if len(p.Dispatches) != 1 {
		t.Fatalf("want one kernel, got %d", len(p.Dispatches))
	}
}
