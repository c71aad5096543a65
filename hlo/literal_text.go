package hlo

import (
	"math"
	"strconv"
	"strings"
)

// FormatLiteralValues prints a literal's elements as HLO constant text: a scalar as
// its value, an array as nested braces per dimension ({ {1, 2}, {3, 4} }), a tuple as
// a parenthesised list. Floats print in the shortest form that parses back to the
// same bits (via float32 for f32, f16 and bf16), with inf, -inf and nan as XLA does.
func FormatLiteralValues(l *Literal) string {
	var sb strings.Builder
	writeLiteralValues(&sb, l)
	return sb.String()
}

func writeLiteralValues(sb *strings.Builder, l *Literal) {
	if l.shape.IsTuple() {
		sb.WriteString("(")
		for i, e := range l.elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeLiteralValues(sb, e)
		}
		sb.WriteString(")")
		return
	}
	if l.shape.Rank() == 0 {
		sb.WriteString(FormatElement(l, 0))
		return
	}
	next := 0
	writeNested(sb, l, 0, &next)
}

func writeNested(sb *strings.Builder, l *Literal, dim int, next *int) {
	sb.WriteString("{")
	for i := int64(0); i < l.shape.Dims[dim]; i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		if dim == l.shape.Rank()-1 {
			sb.WriteString(FormatElement(l, *next))
			*next++
		} else {
			writeNested(sb, l, dim+1, next)
		}
	}
	sb.WriteString("}")
}

// FormatElement prints element i of an array literal.
func FormatElement(l *Literal, i int) string {
	dt := l.shape.DType
	switch {
	case dt == Pred:
		return strconv.FormatBool(l.Bool(i))
	case dt == Token:
		return "token"
	case dt.IsSigned():
		return strconv.FormatInt(l.Int64(i), 10)
	case dt.IsUnsigned():
		return strconv.FormatUint(l.Uint64(i), 10)
	case dt.IsComplex(): // XLA's (real, imag)
		v, part := l.Complex128(i), dt.ComplexPart()
		return "(" + formatFloat(real(v), part) + ", " + formatFloat(imag(v), part) + ")"
	}
	return formatFloat(l.Float64(i), dt)
}

func formatFloat(v float64, dt DType) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if dt.IsLowPrecisionFloat() {
		return formatMinifloat(v, dt)
	}
	bits := 32
	if dt == F64 {
		bits = 64
	}
	return strconv.FormatFloat(v, 'g', -1, bits)
}

// formatMinifloat prints v as XLA does, with %g and the type's max_digits10
// significant digits (2 + ⌊(mantissa bits + 1)·log10 2⌋): 448, 0.00195, 5.7e+04.
// Those always convert back to the same value; the loop guards that.
func formatMinifloat(v float64, dt DType) string {
	want := MinifloatFromFloat64(dt, v)
	digits := minifloats[dt].mant + 1
	for prec := 2 + digits*30103/100000; prec < 17; prec++ {
		s := strconv.FormatFloat(v, 'g', prec, 64)
		back, err := strconv.ParseFloat(s, 64)
		if err == nil && MinifloatFromFloat64(dt, back) == want && !MinifloatOverflows(dt, back) {
			return s
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
