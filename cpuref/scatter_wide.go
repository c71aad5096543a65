package cpuref

import "github.com/vkxla/vkxla/hlo"

// evalScatterWide is scatter over c128 values: evalScatter's geometry and order
// (scatterPlan.forEachUpdate, so repeated indices combine in the same order), the
// combiner called on scalar literals. Any combiner works: add, replace (returning
// the update), multiply, or one of several outputs.
func evalScatterWide(ev *evaluator, in *hlo.Instruction, ops []*hlo.Literal) (*hlo.Literal, error) {
	sd, operands, updates, r, err := scatterArgs(in, ops)
	if err != nil {
		return nil, err
	}
	n := len(operands)
	f, err := newLiteralFn(ev, in, 0, n)
	if err != nil {
		return nil, err
	}
	p, err := newScatterPlan(sd, r, operands, updates)
	if err != nil {
		return nil, err
	}
	out := make([][]*hlo.Literal, operands[0].NumElements())
	for o := range out {
		out[o] = elementsAt(operands, o)
	}
	err = p.forEachUpdate(func(o, u int64) error {
		var err error
		out[o], err = f.combine(out[o], elementsAt(updates, int(u)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return gatherResults(in.Shape, out, n)
}
