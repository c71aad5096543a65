package hlo

import (
	"fmt"
	"strings"
)

// The HLO text printer. It prints XLA's own syntax, layouts and operand shapes
// included, so that the text is also readable by XLA's tools:
//
//	HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[2,3]{1,0}}
//
//	ENTRY %main (x: f32[2,3]) -> f32[2,3] {
//	  %x = f32[2,3]{1,0} parameter(0)
//	  ROOT %neg = f32[2,3]{1,0} negate(f32[2,3]{1,0} %x)
//	}
//
// Layouts are always the row-major default ({rank-1,…,0}). Computations print in
// Module.Computations order (callees first) and instructions in Instructions order,
// so the output is deterministic and ParseModule(Print(m)) prints back identically.

// Print returns the module in HLO text form.
func Print(m *Module) string {
	var sb strings.Builder
	writeModule(&sb, m)
	return sb.String()
}

// String returns the module in HLO text form (see Print).
func (m *Module) String() string { return Print(m) }

// String returns the computation in HLO text form, without ENTRY.
func (c *Computation) String() string {
	var sb strings.Builder
	writeComputation(&sb, c, false)
	return sb.String()
}

// String returns the instruction as one line of HLO text, without ROOT.
func (in *Instruction) String() string {
	var sb strings.Builder
	writeInstruction(&sb, in)
	return sb.String()
}

func writeModule(sb *strings.Builder, m *Module) {
	sb.WriteString("HloModule " + m.Name)
	if len(m.InputOutputAlias) > 0 {
		sb.WriteString(", input_output_alias=" + aliasText(m.InputOutputAlias))
	}
	if m.Entry != nil {
		sb.WriteString(", entry_computation_layout={" + entryLayout(m.Entry) + "}")
	}
	sb.WriteString("\n")
	entryPrinted := false
	for _, c := range m.Computations {
		sb.WriteString("\n")
		writeComputation(sb, c, c == m.Entry)
		entryPrinted = entryPrinted || c == m.Entry
	}
	if m.Entry != nil && !entryPrinted {
		sb.WriteString("\n")
		writeComputation(sb, m.Entry, true)
	}
}

// entryLayout is XLA's entry_computation_layout value: (params)->result, with layouts.
func entryLayout(c *Computation) string {
	params := make([]string, len(c.Params))
	for i, p := range c.Params {
		params[i] = layoutShapeString(p.Shape)
	}
	return "(" + strings.Join(params, ", ") + ")->" + layoutShapeString(rootShape(c))
}

func rootShape(c *Computation) Shape {
	if c.Root == nil {
		return MakeTuple()
	}
	return c.Root.Shape
}

func writeComputation(sb *strings.Builder, c *Computation, entry bool) {
	if entry {
		sb.WriteString("ENTRY ")
	}
	sb.WriteString("%" + c.Name + " (")
	for i, p := range c.Params {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(p.Name + ": " + p.Shape.String())
	}
	sb.WriteString(") -> " + rootShape(c).String() + " {\n")
	for _, in := range c.Instructions {
		sb.WriteString("  ")
		if in == c.Root {
			sb.WriteString("ROOT ")
		}
		writeInstruction(sb, in)
		sb.WriteString("\n")
	}
	sb.WriteString("}\n")
}

func writeInstruction(sb *strings.Builder, in *Instruction) {
	writeOpAndAttrs(sb, in)
	if in.Sharding != nil {
		sb.WriteString(", sharding=" + in.Sharding.String())
	}
}

func writeOpAndAttrs(sb *strings.Builder, in *Instruction) {
	if in.Op == OpBitcast && in.Attrs.Layouts != nil { // the layouts are its meaning
		l := in.Attrs.Layouts
		sb.WriteString("%" + in.Name + " = " + shapeWithLayout(in.Shape, l.Result) + " bitcast(")
		if x := in.Operands; len(x) == 1 && x[0] != nil {
			sb.WriteString(shapeWithLayout(x[0].Shape, l.Operand) + " %" + x[0].Name)
		}
		sb.WriteString(")")
		return
	}
	sb.WriteString("%" + in.Name + " = " + layoutShapeString(in.Shape) + " " + in.Op.String() + "(")
	switch in.Op {
	case OpParameter:
		fmt.Fprint(sb, in.Attrs.ParameterNumber)
	case OpConstant:
		sb.WriteString(constantText(in.Attrs.Literal))
	default:
		writeOperands(sb, in.Operands)
	}
	sb.WriteString(")")
	for _, a := range opAttrs[in.Op] {
		if text, ok := a.codec.print(in); ok {
			sb.WriteString(", " + a.name + "=" + text)
		}
	}
}

func writeOperands(sb *strings.Builder, operands []*Instruction) {
	for i, op := range operands {
		if i > 0 {
			sb.WriteString(", ")
		}
		if op == nil {
			sb.WriteString("%<nil>")
			continue
		}
		sb.WriteString(layoutShapeString(op.Shape) + " %" + op.Name)
	}
}

// constantText prints a constant's value; a missing literal prints as XLA's elision.
func constantText(l *Literal) string {
	if l == nil {
		return "{...}"
	}
	return FormatLiteralValues(l)
}

// layoutShapeString prints a shape with XLA's default row-major layout: f32[2,3]{1,0}.
// Scalars print without a layout, as XLA prints them.
func layoutShapeString(s Shape) string {
	if s.IsTuple() {
		parts := make([]string, len(s.Elems))
		for i, e := range s.Elems {
			parts[i] = layoutShapeString(e)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	if len(s.Dims) == 0 {
		return s.String()
	}
	return shapeWithLayout(s, RowMajor(len(s.Dims)))
}

// shapeWithLayout prints an array shape with a minor-to-major layout.
func shapeWithLayout(s Shape, minorToMajor []int64) string {
	if len(s.Dims) == 0 || s.IsTuple() {
		return layoutShapeString(s)
	}
	return s.String() + "{" + joinInts(minorToMajor, ",") + "}"
}

func joinInts(xs []int64, sep string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

// intList prints {1,2,3}.
func intList(xs []int64) string { return "{" + joinInts(xs, ",") + "}" }

// sliceText prints slice={[0:4:2], [1:3]}; a unit stride is omitted, as XLA does.
func sliceText(dims []SliceDim) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprintf("[%d:%d", d.Start, d.Limit)
		if d.Stride != 1 {
			parts[i] += fmt.Sprintf(":%d", d.Stride)
		}
		parts[i] += "]"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// paddingText prints low_high per dimension joined by x, with _interior on every
// dimension when any dimension has interior padding (XLA's PaddingConfigToString).
func paddingText(dims []PadDim) string {
	interior := false
	for _, d := range dims {
		interior = interior || d.Interior != 0
	}
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprintf("%d_%d", d.Low, d.High)
		if interior {
			parts[i] += fmt.Sprintf("_%d", d.Interior)
		}
	}
	return strings.Join(parts, "x")
}

// windowText prints window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=… rhs_dilate=…
// rhs_reversal=…}; a field whose every dimension has the default value is left out,
// as XLA leaves it out (size is always printed).
func windowText(w []WindowDim) string {
	fields := []string{"size=" + windowField(w, func(d WindowDim) (string, bool) { return fmt.Sprint(d.Size), false })}
	for _, f := range []struct {
		name  string
		value func(WindowDim) (string, bool)
	}{
		{"stride", func(d WindowDim) (string, bool) { return fmt.Sprint(d.Stride), d.Stride == 1 }},
		{"pad", func(d WindowDim) (string, bool) {
			return fmt.Sprintf("%d_%d", d.PadLow, d.PadHigh), d.PadLow == 0 && d.PadHigh == 0
		}},
		{"lhs_dilate", func(d WindowDim) (string, bool) { return fmt.Sprint(d.BaseDilation), d.BaseDilation == 1 }},
		{"rhs_dilate", func(d WindowDim) (string, bool) { return fmt.Sprint(d.WindowDilation), d.WindowDilation == 1 }},
		{"rhs_reversal", func(d WindowDim) (string, bool) { return boolDigit(d.WindowReversal), !d.WindowReversal }},
	} {
		if text := windowField(w, f.value); text != "" {
			fields = append(fields, f.name+"="+text)
		}
	}
	return "{" + strings.Join(fields, " ") + "}"
}

// windowField joins one field's per-dimension values with x, or returns "" when
// every dimension has the field's default (value reports whether it does).
func windowField(w []WindowDim, value func(WindowDim) (string, bool)) string {
	parts := make([]string, len(w))
	allDefault := true
	for i, d := range w {
		text, isDefault := value(d)
		parts[i] = text
		allDefault = allDefault && isDefault
	}
	if allDefault {
		return ""
	}
	return strings.Join(parts, "x")
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// dimLabelsText prints convolution dimension numbers as b01f_01io->b01f.
func dimLabelsText(c *ConvDims) string {
	return labels(c.InputBatch, 'b', c.InputFeature, 'f', c.InputSpatial) + "_" +
		labels(c.KernelInput, 'i', c.KernelOutput, 'o', c.KernelSpatial) + "->" +
		labels(c.OutputBatch, 'b', c.OutputFeature, 'f', c.OutputSpatial)
}

// labels spells one operand's dimension roles; a position out of range (malformed IR)
// leaves a '?' rather than panicking, so that broken modules can still be dumped.
func labels(first int64, firstLabel byte, second int64, secondLabel byte, spatial []int64) string {
	out := []byte(strings.Repeat("?", 2+len(spatial)))
	set := func(pos int64, label byte) {
		if pos >= 0 && pos < int64(len(out)) {
			out[pos] = label
		}
	}
	set(first, firstLabel)
	set(second, secondLabel)
	for i, pos := range spatial {
		set(pos, spatialLabel(i))
	}
	return string(out)
}

// spatialLabel names spatial dimension i. XLA spells spatial dimensions with one
// digit each, so an eleventh prints as '?' (and does not parse back).
func spatialLabel(i int) byte {
	if i < 10 {
		return byte('0' + i)
	}
	return '?'
}

func computationRef(c *Computation) string {
	if c == nil {
		return "%<nil>"
	}
	return "%" + c.Name
}

func computationList(cs []*Computation) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = computationRef(c)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
