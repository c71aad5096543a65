package hlo

import "fmt"

// The built-in custom-call targets: the single-device identities and annotations
// XLA emits, TopK, and JAX's fused threefry2x32.

func identityTarget(name string) CustomCallTarget {
	return CustomCallTarget{Name: name, Summary: "identity: the operand, unchanged", Expand: expandIdentity, identity: true}
}

// identityTargets are XLA's sharding annotations and its device-placement
// annotation, which on one device pass their operand through.
var identityTargets = []string{"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement"}

func init() {
	for _, name := range identityTargets {
		mustRegister(identityTarget(name))
	}
	for _, name := range []string{MoveToHostTarget, MoveToDeviceTarget} {
		mustRegister(CustomCallTarget{Name: name, Expand: expandIdentity, placement: true,
			Summary: "host offload: the operand, copied into host memory (MoveToHost) or back to the device (MoveToDevice)"})
	}
	mustRegister(CustomCallTarget{Name: "TopK", Expand: expandTopK,
		Summary: "the k largest (or smallest) elements along the last dimension and their indices"})
	for _, name := range []string{"cu_threefry2x32", "cu_threefry2x32_ffi", "hip_threefry2x32", "hip_threefry2x32_ffi"} {
		mustRegister(CustomCallTarget{Name: name, Expand: expandThreefry2x32,
			Summary: "JAX's threefry2x32: Threefry2x32-20 of (x0, x1) under (k0, k1), elementwise"})
	}
}

func mustRegister(t CustomCallTarget) {
	if err := RegisterCustomCall(t); err != nil {
		panic(err)
	}
}

func expandIdentity(_ *Builder, call *Instruction, operands []*Instruction) (*Instruction, error) {
	if len(operands) != 1 || !operands[0].Shape.Equal(call.Shape) {
		return nil, fmt.Errorf("an identity target takes one operand of the result's shape %v, got %s",
			call.Shape, describeOperands(operands))
	}
	return operands[0], nil
}

// expandTopK: operand x of shape [..., n]; result (values [..., k], indices
// s32[..., k]), the k greatest elements along the last dimension in descending
// order (ascending when largest = false), ties in index order. k is the result's
// last dimension (and backend_config's k, if given). The comparator (to_apply, as
// XLA's TopK carries it) must be a compare of its two parameters, GT or LT; the
// typed-FFI form gives largest in backend_config instead.
func expandTopK(b *Builder, call *Instruction, operands []*Instruction) (*Instruction, error) {
	if len(operands) != 1 || operands[0].Shape.Rank() == 0 {
		return nil, fmt.Errorf("TopK takes one operand of rank >= 1, got %s", describeOperands(operands))
	}
	x := operands[0]
	s := call.Shape
	rank := x.Shape.Rank()
	if !s.IsTuple() || len(s.Elems) != 2 || s.Elems[0].DType != x.Shape.DType || s.Elems[1].DType != S32 ||
		s.Elems[0].Rank() != rank || !s.Elems[0].SameDims(s.Elems[1]) {
		return nil, fmt.Errorf("TopK result %v is not (values, s32 indices) of the operand's rank", s)
	}
	k := s.Elems[0].Dims[rank-1]
	for d := 0; d < rank-1; d++ {
		if s.Elems[0].Dims[d] != x.Shape.Dims[d] {
			return nil, fmt.Errorf("TopK result %v changes a batch dimension of the operand %v", s, x.Shape)
		}
	}
	if k > x.Shape.Dims[rank-1] {
		return nil, fmt.Errorf("TopK k=%d exceeds the last dimension of %v", k, x.Shape)
	}
	dir, err := topKDirection(call, k)
	if err != nil {
		return nil, err
	}
	return topK(b, x, k, dir), nil
}

// topKDirection reads the sort direction from the comparator or backend_config.
func topKDirection(call *Instruction, k int64) (ComparisonDirection, error) {
	cfg, err := call.Attrs.CustomCall.BackendConfigMap()
	if err != nil {
		return 0, fmt.Errorf("TopK backend_config: %w", err)
	}
	if v, ok := cfg["k"]; ok && !sameInt(v, k) {
		return 0, fmt.Errorf("TopK backend_config k=%v differs from the result's %d", v, k)
	}
	if len(call.Called) == 1 {
		return comparatorDirection(call.Called[0])
	}
	if len(call.Called) > 1 {
		return 0, fmt.Errorf("TopK takes at most one comparator, got %d", len(call.Called))
	}
	if largest, ok := cfg["largest"]; ok && largest == false {
		return CmpLT, nil
	}
	return CmpGT, nil
}

// comparatorDirection accepts a comparator compare(p0, p1), direction GT or LT.
func comparatorDirection(c *Computation) (ComparisonDirection, error) {
	r := c.Root
	if r == nil || r.Op != OpCompare || len(c.Params) != 2 || len(r.Operands) != 2 ||
		r.Operands[0] != c.Params[0] || r.Operands[1] != c.Params[1] ||
		(r.Attrs.Direction != CmpGT && r.Attrs.Direction != CmpLT) {
		return 0, fmt.Errorf("TopK comparator %s must be compare(p0, p1) with direction GT or LT", c.Name)
	}
	return r.Attrs.Direction, nil
}

// sameInt reports a backend_config value equal to k: an int64 from an MLIR
// dictionary, or a float64 from JSON ({"k":3} decodes to 3.0).
func sameInt(v any, k int64) bool {
	switch x := v.(type) {
	case int64:
		return x == k
	case float64:
		return x == float64(k)
	}
	return false
}
