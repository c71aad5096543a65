package hlo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Value parsers of the HLO text form: shapes, integers and lists, attribute values
// (slice, padding, window, dim_labels, computation references) and constant literals.

// parseShape reads f32[2,3], f32[2,3]{1,0}, f32[] or a tuple (f32[2], s32[]); layouts,
// tiled ones included, are skipped (vkxla's layouts are all row-major).
func (p *parser) parseShape() (Shape, error) {
	t := p.peek()
	if t.kind == tokPunct && t.text == "(" {
		return p.parseTupleShape()
	}
	if t.kind != tokName || strings.HasPrefix(t.text, "%") {
		return Shape{}, p.errorAt(t.pos, "expected a shape such as f32[2,3], found %s", t.describe())
	}
	p.next()
	dt, err := ParseDType(t.text)
	if err != nil {
		return Shape{}, p.errorAt(t.pos, "unknown or unsupported element type %q", t.text)
	}
	dims, err := p.parseDims()
	if err != nil {
		return Shape{}, err
	}
	if err := p.checkShapeSize(dims, t.pos); err != nil {
		return Shape{}, err
	}
	p.lastLayout = nil
	if p.layoutFollows() {
		start := p.pos
		p.skipBalanced()
		p.lastLayout = minorToMajor(p.src[start:p.pos])
	}
	return Shape{DType: dt, Dims: dims}, nil
}

// minorToMajor reads a layout's dimension order, {1,0} or {1,0:T(8,128)}, from its
// text; tiling and memory-space details after ':' are dropped. Text that is not a
// list of integers gives nil (the default layout), which the bitcast shape rule,
// the one reader, then checks against the rank.
func minorToMajor(text string) []int64 {
	text = strings.TrimSpace(text)
	text = strings.TrimPrefix(text, "{")
	if i := strings.IndexAny(text, ":}"); i >= 0 {
		text = text[:i]
	}
	out := []int64{}
	for _, f := range strings.Split(text, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// parseTupleShape reads a tuple shape, at most MaxTupleDepth tuples deep (the
// recursion stays shallow whatever the text).
func (p *parser) parseTupleShape() (Shape, error) {
	open := p.next() // (
	if p.tupleDepth == MaxTupleDepth {
		e := p.errorAt(open.pos, "tuple shapes nested more than %d deep", MaxTupleDepth)
		e.Err = ErrTupleNesting
		return Shape{}, e
	}
	p.tupleDepth++
	defer func() { p.tupleDepth-- }()
	elems := []Shape{}
	for !p.accept(")") {
		if len(elems) > 0 {
			if err := p.expect(",", "or ')' after a tuple element shape"); err != nil {
				return Shape{}, err
			}
		}
		e, err := p.parseShape()
		if err != nil {
			return Shape{}, err
		}
		elems = append(elems, e)
	}
	p.lastLayout = nil
	return Shape{DType: Tuple, Elems: elems}, nil
}

// parseDims reads [2,3] or []. Dynamic dimensions (?, <=4) are refused.
func (p *parser) parseDims() ([]int64, error) {
	if err := p.expect("[", "after the element type"); err != nil {
		return nil, err
	}
	var dims []int64
	for !p.accept("]") {
		if len(dims) > 0 {
			if err := p.expect(",", "or ']' after a dimension"); err != nil {
				return nil, err
			}
		}
		t := p.peek()
		if t.text == "?" || t.text == "<" {
			return nil, p.errorAt(t.pos, "dynamic dimension %s is not supported: vkxla compiles static shapes (write the bound as a static size)", dynamicDimText(p, t))
		}
		d, err := p.parseInt()
		if err != nil {
			return nil, err
		}
		if d < 0 {
			return nil, p.errorAt(t.pos, "negative dimension %d", d)
		}
		dims = append(dims, d)
	}
	return dims, nil
}

// dynamicDimText is the text of a dynamic dimension, ? or <=N, for errors.
func dynamicDimText(p *parser, t token) string {
	end := scanWhile(p.src, t.pos+1, func(c byte) bool { return c == '=' || c == ' ' || isDigit(c) })
	return p.src[t.pos:end]
}

// checkShapeSize applies the shape size limit (MaxShapeElements) at the shape's
// position.
func (p *parser) checkShapeSize(dims []int64, pos int) error {
	if _, err := MakeShape(F32, dims...).NumElementsChecked(); err != nil {
		e := p.errorAt(pos, "shape has more than %d elements", MaxShapeElements)
		e.Err = ErrShapeTooLarge
		return e
	}
	return nil
}

// layoutFollows tells a layout ({1,0}, {1,0:T(8,128)}, {}) from a computation body
// after a signature's result shape: a layout starts with a digit, ':' or '}'.
func (p *parser) layoutFollows() bool {
	if t := p.peek(); t.kind != tokPunct || t.text != "{" {
		return false
	}
	i := scanWhile(p.src, p.pos+1, func(c byte) bool { return c == ' ' || c == '\t' })
	return i < len(p.src) && (isDigit(p.src[i]) || p.src[i] == ':' || p.src[i] == '}')
}

// parseInt reads a decimal integer.
func (p *parser) parseInt() (int64, error) {
	t := p.next()
	v, err := strconv.ParseInt(t.text, 10, 64)
	if t.kind != tokNumber || err != nil {
		return 0, p.errorAt(t.pos, "expected an integer, found %s", t.describe())
	}
	return v, nil
}

// parseIntList reads {1,2,3} or {}.
func (p *parser) parseIntList() ([]int64, error) {
	return parseBracedList(p, "integers", p.parseInt)
}

// parseBracedList reads {item, item, …} or {} (nil), what naming the items in errors.
func parseBracedList[T any](p *parser, what string, item func() (T, error)) ([]T, error) {
	if err := p.expect("{", "to open a list of "+what); err != nil {
		return nil, err
	}
	var xs []T
	for !p.accept("}") {
		if len(xs) > 0 {
			if err := p.expect(",", "or '}' in a list of "+what); err != nil {
				return nil, err
			}
		}
		v, err := item()
		if err != nil {
			return nil, err
		}
		xs = append(xs, v)
	}
	return xs, nil
}

// parseBool reads true or false.
func (p *parser) parseBool() (bool, error) {
	switch t := p.next(); {
	case t.kind == tokName && t.text == "true":
		return true, nil
	case t.kind == tokName && t.text == "false":
		return false, nil
	default:
		return false, p.errorAt(t.pos, "expected true or false, found %s", t.describe())
	}
}

// parseEnum reads a word and hands it to set, which reports unknown values.
func (p *parser) parseEnum(set func(string) error) error {
	t := p.next()
	if t.kind != tokName {
		return p.errorAt(t.pos, "expected a name, found %s", t.describe())
	}
	if err := set(t.text); err != nil {
		return p.errorAt(t.pos, "%v", err)
	}
	return nil
}

// parseSliceDims reads {[0:4:2], [1:3]}; the stride defaults to 1.
func (p *parser) parseSliceDims() ([]SliceDim, error) {
	if err := p.expect("{", "to open slice="); err != nil {
		return nil, err
	}
	var dims []SliceDim
	for !p.accept("}") {
		if len(dims) > 0 {
			if err := p.expect(",", "or '}' after a slice dimension"); err != nil {
				return nil, err
			}
		}
		d, err := p.parseSliceDim()
		if err != nil {
			return nil, err
		}
		dims = append(dims, d)
	}
	return dims, nil
}

// parseSliceDim reads [start:limit] or [start:limit:stride].
func (p *parser) parseSliceDim() (SliceDim, error) {
	d := SliceDim{Stride: 1}
	if err := p.expect("[", "to open a slice dimension [start:limit:stride]"); err != nil {
		return d, err
	}
	for i, field := range []*int64{&d.Start, &d.Limit, &d.Stride} {
		if i == 2 && p.accept("]") {
			return d, nil
		}
		if i > 0 {
			if err := p.expect(":", "in a slice dimension [start:limit:stride]"); err != nil {
				return d, err
			}
		}
		v, err := p.parseInt()
		if err != nil {
			return d, err
		}
		*field = v
	}
	return d, p.expect("]", "to close a slice dimension")
}

// parsePadding reads low_high[_interior] per dimension, joined by x (0_0x1_2_1); an
// empty value is a rank-0 pad.
func (p *parser) parsePadding() ([]PadDim, error) {
	text, pos := p.atom()
	if text == "" {
		return nil, nil
	}
	var dims []PadDim
	for _, part := range strings.Split(text, "x") {
		vs, ok := splitInts(part, "_")
		if !ok || len(vs) < 2 || len(vs) > 3 {
			return nil, p.errorAt(pos, "bad padding %q: expected low_high or low_high_interior per dimension, joined by x", text)
		}
		d := PadDim{Low: vs[0], High: vs[1]}
		if len(vs) == 3 {
			d.Interior = vs[2]
		}
		dims = append(dims, d)
	}
	return dims, nil
}

// splitInts parses "1_2_3" into integers.
func splitInts(s, sep string) ([]int64, bool) {
	parts := strings.Split(s, sep)
	vs := make([]int64, len(parts))
	for i, part := range parts {
		v, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return nil, false
		}
		vs[i] = v
	}
	return vs, true
}

// parseWindow reads {size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1
// rhs_reversal=0x0}; size is required, the other fields default to XLA's defaults.
func (p *parser) parseWindow() ([]WindowDim, error) {
	open := p.peek().pos
	if err := p.expect("{", "to open window="); err != nil {
		return nil, err
	}
	fields := map[string][]string{}
	for !p.accept("}") {
		key := p.next()
		if key.kind != tokName {
			return nil, p.errorAt(key.pos, "expected a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal) or '}', found %s", key.describe())
		}
		if err := p.expect("=", "after window field "+key.text); err != nil {
			return nil, err
		}
		value, _ := p.atom()
		if _, dup := fields[key.text]; dup {
			return nil, p.errorAt(key.pos, "duplicate window field %s", key.text)
		}
		fields[key.text] = strings.Split(value, "x")
		if !slices.Contains(windowFields, key.text) {
			return nil, p.errorAt(key.pos, "unknown window field %s", key.text)
		}
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return p.buildWindow(fields, open)
}

// windowFields are the fields of window=, in XLA's printing order.
var windowFields = []string{"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"}

// buildWindow turns the window's fields (each split at 'x') into dimensions.
func (p *parser) buildWindow(fields map[string][]string, pos int) ([]WindowDim, error) {
	sizes, ok := fields["size"]
	if !ok {
		return nil, p.errorAt(pos, "window has no size field")
	}
	w := make([]WindowDim, len(sizes))
	for _, name := range windowFields {
		if parts, ok := fields[name]; ok && len(parts) != len(sizes) {
			return nil, p.errorAt(pos, "window field %s has %d dimensions, size has %d", name, len(parts), len(sizes))
		}
	}
	for i := range w {
		w[i] = NewWindowDim(0)
		if err := setWindowDim(&w[i], fields, i); err != nil {
			return nil, p.errorAt(pos, "bad window: %v", err)
		}
	}
	return w, nil
}

// setWindowDim fills dimension i of a window from its fields.
func setWindowDim(d *WindowDim, fields map[string][]string, i int) error {
	ints := []struct {
		name string
		dst  *int64
	}{{"size", &d.Size}, {"stride", &d.Stride}, {"lhs_dilate", &d.BaseDilation}, {"rhs_dilate", &d.WindowDilation}}
	for _, f := range ints {
		if parts, ok := fields[f.name]; ok {
			v, err := strconv.ParseInt(parts[i], 10, 64)
			if err != nil {
				return fmt.Errorf("%s %q is not an integer", f.name, parts[i])
			}
			*f.dst = v
		}
	}
	if parts, ok := fields["pad"]; ok {
		vs, ok := splitInts(parts[i], "_")
		if !ok || len(vs) != 2 {
			return fmt.Errorf("pad %q is not low_high", parts[i])
		}
		d.PadLow, d.PadHigh = vs[0], vs[1]
	}
	if parts, ok := fields["rhs_reversal"]; ok {
		if parts[i] != "0" && parts[i] != "1" {
			return fmt.Errorf("rhs_reversal %q is not 0 or 1", parts[i])
		}
		d.WindowReversal = parts[i] == "1"
	}
	return nil
}

// parseDimLabels reads convolution dimension numbers: b01f_01io->b01f.
func (p *parser) parseDimLabels() (*ConvDims, error) {
	text, pos := p.atom()
	c, err := dimLabels(text)
	if err != nil {
		return nil, p.errorAt(pos, "bad dim_labels %q: %v", text, err)
	}
	return c, nil
}

func dimLabels(text string) (*ConvDims, error) {
	operands, output, ok := strings.Cut(text, "->")
	input, kernel, ok2 := strings.Cut(operands, "_")
	if !ok || !ok2 {
		return nil, fmt.Errorf("expected input_kernel->output, such as b01f_01io->b01f")
	}
	c := &ConvDims{}
	var err error
	if c.InputBatch, c.InputFeature, c.InputSpatial, err = roleLabels(input, 'b', 'f'); err != nil {
		return nil, fmt.Errorf("input %v", err)
	}
	if c.KernelInput, c.KernelOutput, c.KernelSpatial, err = roleLabels(kernel, 'i', 'o'); err != nil {
		return nil, fmt.Errorf("kernel %v", err)
	}
	if c.OutputBatch, c.OutputFeature, c.OutputSpatial, err = roleLabels(output, 'b', 'f'); err != nil {
		return nil, fmt.Errorf("output %v", err)
	}
	if len(c.KernelSpatial) != len(c.InputSpatial) || len(c.OutputSpatial) != len(c.InputSpatial) {
		return nil, fmt.Errorf("input, kernel and output have different numbers of spatial dimensions")
	}
	return c, nil
}

// roleLabels reads one operand's labels: exactly one of each role letter, and the
// spatial digits 0…n-1 once each, in any positions.
func roleLabels(s string, first, second byte) (int64, int64, []int64, error) {
	pos := map[byte]int64{}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != first && c != second && !isDigit(c) {
			return 0, 0, nil, fmt.Errorf("labels %q: unexpected %q (expected %c, %c or a digit)", s, c, first, second)
		}
		if _, dup := pos[c]; dup {
			return 0, 0, nil, fmt.Errorf("labels %q: %q appears twice", s, c)
		}
		pos[c] = int64(i)
	}
	_, hasFirst := pos[first]
	_, hasSecond := pos[second]
	if !hasFirst || !hasSecond {
		return 0, 0, nil, fmt.Errorf("labels %q: need one %c and one %c", s, first, second)
	}
	spatial := make([]int64, len(s)-2)
	for d := range spatial {
		at, ok := pos[byte('0'+d)]
		if !ok {
			return 0, 0, nil, fmt.Errorf("labels %q: spatial dimension %d is missing", s, d)
		}
		spatial[d] = at
	}
	return pos[first], pos[second], spatial, nil
}

// parseCalled reads a computation reference (%add or add) into role slot i; it is
// resolved once the whole module is read.
func (p *parser) parseCalled(in *Instruction, i int) error {
	t := p.next()
	if t.kind != tokName {
		return p.errorAt(t.pos, "expected a computation name, found %s", t.describe())
	}
	for len(in.Called) <= i {
		in.Called = append(in.Called, nil)
	}
	p.calls = append(p.calls, pendingCall{from: p.current, inst: in, index: i,
		name: strings.TrimPrefix(t.text, "%"), pos: t.pos})
	return nil
}

// parseCalledList reads {%a, %b} into the slots 0, 1, ….
func (p *parser) parseCalledList(in *Instruction) error {
	if err := p.expect("{", "to open a list of computations"); err != nil {
		return err
	}
	for i := 0; !p.accept("}"); i++ {
		if i > 0 {
			if err := p.expect(",", "or '}' in a list of computations"); err != nil {
				return err
			}
		}
		if err := p.parseCalled(in, i); err != nil {
			return err
		}
	}
	return nil
}

// parseConstant reads a constant's literal of the declared shape. An elided literal
// {...} (XLA elides large constants when dumping) is filled with seeded pseudo-random
// values: see fillElided.
func (p *parser) parseConstant(s Shape, name string) (*Literal, error) {
	if s.IsTuple() {
		return p.parseTupleLiteral(s, name)
	}
	start := p.peek().pos
	if p.elidedFollows() {
		if s.ByteSize() > maxElidedBytes {
			return nil, p.errorAt(start, "elided constant %s of shape %v is larger than %d bytes", name, s, maxElidedBytes)
		}
		l := NewLiteral(s)
		fillElided(l, name)
		return l, nil
	}
	// Every element takes at least one character, so a shape with more elements than
	// the text left cannot be spelled out; refusing it early avoids a huge allocation.
	if s.NumElements() > int64(len(p.src)-start) {
		return nil, p.errorAt(start, "constant %s of shape %v has more elements than the text holds", name, s)
	}
	l := NewLiteral(s)
	if s.Rank() == 0 {
		return l, p.parseElement(l, 0)
	}
	return l, p.parseNested(l)
}

// elidedFollows consumes {...} if it comes next.
func (p *parser) elidedFollows() bool {
	save := p.pos
	if p.accept("{") && p.accept("...") && p.accept("}") {
		return true
	}
	p.pos = save
	return false
}

func (p *parser) parseTupleLiteral(s Shape, name string) (*Literal, error) {
	if err := p.expect("(", "to open a tuple constant"); err != nil {
		return nil, err
	}
	elems := make([]*Literal, len(s.Elems))
	for i, es := range s.Elems {
		if i > 0 {
			if err := p.expect(",", "between tuple constant elements"); err != nil {
				return nil, err
			}
		}
		e, err := p.parseConstant(es, name+"."+strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		elems[i] = e
	}
	if err := p.expect(")", "after the tuple constant's "+strconv.Itoa(len(elems))+" elements"); err != nil {
		return nil, err
	}
	return TupleLiteral(elems...), nil
}

// parseNested reads an array literal as {…} nested per dimension. It loops over a
// stack of the values read in each open dimension instead of recursing: a
// literal's depth is its rank, which text can make millions (recursion that deep
// overflowed the goroutine stack). The errors' contexts are worded only on an error
// (printing the shape at every level made a literal nested r deep cost O(r²)).
func (p *parser) parseNested(l *Literal) error {
	s := l.Shape()
	if err := p.openDim(s, 0); err != nil {
		return err
	}
	read := []int64{0} // values read in each open dimension
	next := 0
	for {
		dim := len(read) - 1
		switch {
		case read[dim] == s.Dims[dim]:
			if t := p.peek(); !p.accept("}") {
				return p.errorAt(t.pos, "expected '}' after %d values in dimension %d of a %v constant, found %s", s.Dims[dim], dim, s, t.describe())
			}
			if read = read[:dim]; dim == 0 {
				return nil
			}
			read[dim-1]++
			continue
		case read[dim] > 0:
			if err := p.expect(",", "between constant values"); err != nil {
				return err
			}
		}
		if dim == s.Rank()-1 {
			if err := p.parseElement(l, next); err != nil {
				return err
			}
			next++
			read[dim]++
			continue
		}
		if err := p.openDim(s, dim+1); err != nil {
			return err
		}
		read = append(read, 0)
	}
}

// openDim consumes the '{' that opens dimension dim of a constant of shape s.
func (p *parser) openDim(s Shape, dim int) error {
	if t := p.peek(); !p.accept("{") {
		return p.errorAt(t.pos, "expected '{' to open dimension %d of a %v constant, found %s", dim, s, t.describe())
	}
	return nil
}

// parseElement reads one value into element i: true/false for pred; an integer in
// range for integer types; a decimal, inf, -inf or nan (an XLA payload such as
// nan(0x1) is accepted and dropped) for floats, which must not overflow the type.
func (p *parser) parseElement(l *Literal, i int) error {
	dt := l.DType()
	if dt.IsComplex() {
		return p.setComplex(l, i)
	}
	t := p.next()
	if t.kind != tokNumber && t.kind != tokName {
		return p.errorAt(t.pos, "expected a %v value, found %s", dt, t.describe())
	}
	switch {
	case dt == Pred:
		return p.setPred(l, i, t)
	case dt == Token: // a token constant (after-all's expansion) holds nothing
		if t.text != "token" {
			return p.errorAt(t.pos, "expected token, found %s", t.describe())
		}
	case dt.IsSigned():
		v, err := strconv.ParseInt(t.text, 10, dt.Bits())
		if err != nil {
			return p.errorAt(t.pos, "expected a %v value, found %s", dt, t.describe())
		}
		l.SetInt64(i, v)
	case dt.IsUnsigned():
		v, err := strconv.ParseUint(t.text, 10, dt.Bits())
		if err != nil {
			return p.errorAt(t.pos, "expected a %v value, found %s", dt, t.describe())
		}
		l.SetUint64(i, v)
	default:
		return p.setFloat(l, i, t)
	}
	return nil
}

func (p *parser) setPred(l *Literal, i int, t token) error {
	switch t.text {
	case "true", "1":
		l.SetBool(i, true)
	case "false", "0":
		l.SetBool(i, false)
	default:
		return p.errorAt(t.pos, "expected true or false, found %s", t.describe())
	}
	return nil
}

// setComplex reads a complex element as XLA writes it, (real, imag), each part a
// value of the part type (f32 for c64, f64 for c128).
func (p *parser) setComplex(l *Literal, i int) error {
	part := l.DType().ComplexPart()
	if err := p.expect("(", "to open a "+l.DType().String()+" value (real, imag)"); err != nil {
		return err
	}
	re, err := p.complexPart(part)
	if err != nil {
		return err
	}
	if err := p.expect(",", "between the real and imaginary parts of a "+l.DType().String()+" value"); err != nil {
		return err
	}
	im, err := p.complexPart(part)
	if err != nil {
		return err
	}
	if err := p.expect(")", "after the imaginary part of a "+l.DType().String()+" value"); err != nil {
		return err
	}
	l.SetComplex128(i, complex(re, im))
	return nil
}

// complexPart reads one part of a complex value as a value of type part, through
// a scalar literal of that type so that the rules of setFloat (nan payloads,
// overflow) apply unchanged.
func (p *parser) complexPart(part DType) (float64, error) {
	t := p.next()
	if t.kind != tokNumber && t.kind != tokName {
		return 0, p.errorAt(t.pos, "expected a %v value, found %s", part, t.describe())
	}
	scratch := NewLiteral(Scalar(part))
	if err := p.setFloat(scratch, 0, t); err != nil {
		return 0, err
	}
	return scratch.Float64(0), nil
}

func (p *parser) setFloat(l *Literal, i int, t token) error {
	v, ok := parseFloatText(t.text)
	if !ok {
		return p.errorAt(t.pos, "expected a %v value, found %s", l.DType(), t.describe())
	}
	if math.IsNaN(v) && p.peek().text == "(" { // nan(0x…) payload
		p.skipBalanced()
	}
	if err := representable(l.DType(), v); err != nil {
		return p.errorAt(t.pos, "value %s %v", t.text, err)
	}
	l.SetFloat64(i, v)
	if got := l.Float64(i); math.IsInf(got, 0) && !math.IsInf(v, 0) {
		return p.errorAt(t.pos, "value %s overflows %v", t.text, l.DType())
	}
	return nil
}

// representable refuses, for a low-precision float type, a value it cannot hold: a
// finite one it would turn into NaN or saturate (its magnitude rounds beyond the
// largest finite value), inf or nan where it has none, and zero or negative values
// in f8e8m0fnu, which has neither.
func representable(dt DType, v float64) error {
	if !dt.IsLowPrecisionFloat() {
		return nil
	}
	back := MinifloatToFloat64(dt, MinifloatFromFloat64(dt, v))
	switch {
	case math.IsNaN(v) && !math.IsNaN(back):
		return fmt.Errorf("is not a %v value (it has no NaN)", dt)
	case math.IsInf(v, 0) && !math.IsInf(back, 0):
		return fmt.Errorf("is not a %v value (it has no infinity)", dt)
	case MinifloatOverflows(dt, v):
		return fmt.Errorf("overflows %v", dt)
	case dt == F8E8M0FNU && v <= 0:
		return fmt.Errorf("is not a %v value (it has no zero or negative values)", dt)
	}
	return nil
}

// parseFloatText parses a decimal float or inf, -inf, nan, -nan.
func parseFloatText(s string) (float64, bool) {
	neg := strings.HasPrefix(s, "-")
	switch strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+") {
	case "inf":
		if neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		if neg {
			return math.Copysign(math.NaN(), -1), true
		}
		return math.NaN(), true
	}
	if rest := strings.TrimLeft(s, "+-"); rest == "" || !isDigit(rest[0]) {
		return 0, false
	}
	// A finite value beyond float64's range parses as ±Inf with ErrRange; the caller
	// reports it as an overflow of the element type.
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil || math.IsInf(v, 0)
}
