package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/vkxla/vkxla/cpuref"
	"github.com/vkxla/vkxla/hlo"
)

// inputSource says where vkxla run's inputs come from (-inputs):
//
//	random    floats uniform in [-1, 1) ([0.5, 1.5) with -positive), integers in
//	          [0, 8) (small enough to be valid indices), preds a fair coin
//	ones      every element 1 (true)
//	npy:DIR   DIR/<parameter name>.npy, else DIR/<parameter number>.npy, converted
//	          to the parameter's dtype when the file's differs
type inputSource struct {
	kind     string // random, ones or npy
	dir      string
	seed     uint64
	positive bool
}

func parseInputSource(spec string, seed uint64, positive bool) (inputSource, error) {
	src := inputSource{kind: spec, seed: seed, positive: positive}
	if dir, ok := strings.CutPrefix(spec, "npy:"); ok {
		src.kind, src.dir = "npy", dir
	}
	if src.kind != "random" && src.kind != "ones" && (src.kind != "npy" || src.dir == "") {
		return src, fmt.Errorf("-inputs %q: want random, ones or npy:DIR", spec)
	}
	return src, nil
}

func (s inputSource) String() string {
	switch s.kind {
	case "npy":
		return "from " + s.dir
	case "ones":
		return "ones"
	}
	domain := "floats in [-1, 1)"
	if s.positive {
		domain = "floats in [0.5, 1.5)"
	}
	return fmt.Sprintf("random (seed %d; %s, integers in [0, 8), preds a fair coin)", s.seed, domain)
}

// inputs makes every entry parameter's literal, after checking the parameters
// against cpuref's limits (a huge one is an error, not an allocation).
func (s inputSource) inputs(m *hlo.Module, limits cpuref.Limits) ([]*hlo.Literal, error) {
	if err := limits.CheckShapes(m.Entry.ParamShapes()...); err != nil {
		return nil, fmt.Errorf("cpuref: the entry parameters: %w", err)
	}
	rng := rand.New(rand.NewPCG(s.seed, 0x766b786c61))
	inputs := make([]*hlo.Literal, len(m.Entry.Params))
	for i, p := range m.Entry.Params {
		var err error
		switch s.kind {
		case "npy":
			inputs[i], err = s.load(i, p)
		case "ones":
			inputs[i] = fill(p.Shape, func(hlo.DType) float64 { return 1 })
		default:
			inputs[i] = fill(p.Shape, func(dt hlo.DType) float64 { return s.draw(rng, dt) })
		}
		if err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

func (s inputSource) draw(rng *rand.Rand, dt hlo.DType) float64 {
	switch {
	case dt.IsFloat() && s.positive:
		return 0.5 + rng.Float64()
	case dt.IsFloat():
		return 2*rng.Float64() - 1
	case dt == hlo.Pred:
		return float64(rng.IntN(2))
	}
	return float64(rng.IntN(8))
}

// fill makes a literal of shape s (tuples element by element) with value(dtype)
// for each element.
func fill(s hlo.Shape, value func(hlo.DType) float64) *hlo.Literal {
	if s.IsTuple() {
		elems := make([]*hlo.Literal, len(s.Elems))
		for i, e := range s.Elems {
			elems[i] = fill(e, value)
		}
		return hlo.TupleLiteral(elems...)
	}
	lit := hlo.NewLiteral(s)
	for i := range lit.NumElements() {
		v := value(s.DType)
		switch {
		case s.DType.IsFloat():
			lit.SetFloat64(i, v)
		case s.DType == hlo.Pred:
			lit.SetBool(i, v != 0)
		default:
			lit.SetInt64(i, int64(v))
		}
	}
	return lit
}

// load reads parameter i from the npy directory and converts it to p's dtype.
func (s inputSource) load(i int, p *hlo.Instruction) (*hlo.Literal, error) {
	if p.Shape.IsTuple() {
		return nil, fmt.Errorf("parameter %d (%s) is a tuple %v: npy inputs are arrays", i, p.Name, p.Shape)
	}
	path := filepath.Join(s.dir, p.Name+".npy")
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(s.dir, fmt.Sprintf("%d.npy", i))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("parameter %d (%s %v): %w", i, p.Name, p.Shape, err)
	}
	defer f.Close()
	lit, err := readNpy(f, func(s hlo.Shape) error {
		if !s.SameDims(p.Shape) {
			return fmt.Errorf("%v, but parameter %d (%s) is %v", s, i, p.Name, p.Shape)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if lit.DType() == p.Shape.DType {
		return lit, nil
	}
	return fill(p.Shape, nextOf(lit)), nil
}

// nextOf reads a literal's elements in order as float64 (exact for every integer
// up to 2^53 and every float).
func nextOf(lit *hlo.Literal) func(hlo.DType) float64 {
	i := 0
	return func(hlo.DType) float64 {
		v := lit.Float64(i)
		if !lit.DType().IsFloat() {
			v = float64(lit.Int64(i))
		}
		i++
		return v
	}
}
