package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/vkxla/vkxla/hlo"
)

// NumPy's .npy format (version 1–3): a magic string, a header length, a Python
// dict literal naming descr, fortran_order and shape, then the raw data.
var npyMagic = []byte("\x93NUMPY")

// npyTypes maps the descr type codes vkxla reads to its dtypes.
var npyTypes = map[string]hlo.DType{
	"b1": hlo.Pred, "i1": hlo.S8, "i2": hlo.S16, "i4": hlo.S32, "i8": hlo.S64,
	"u1": hlo.U8, "u2": hlo.U16, "u4": hlo.U32, "u8": hlo.U64,
	"f2": hlo.F16, "f4": hlo.F32, "f8": hlo.F64,
}

// atMost accepts arrays of at most max bytes.
func atMost(max int64) func(hlo.Shape) error {
	return func(s hlo.Shape) error {
		if s.ByteSize() > max {
			return fmt.Errorf("npy: %v is larger than %d bytes", s, max)
		}
		return nil
	}
}

// npyKinds names the NumPy type kinds vkxla has no dtype for, for their errors.
var npyKinds = map[byte]string{
	'O': "Python objects", 'U': "Unicode strings", 'S': "byte strings", 'V': "raw bytes",
	'c': "complex numbers", 'M': "datetimes", 'm': "timedeltas",
}

var (
	// npyDescr matches a plain dtype ('<f4', '|O', '<U5') or a structured one (a
	// list of fields), so that either is named when refused.
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*(?:'([^']*)'|(\[[^\]]*\]))`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// readNpy decodes one .npy file into a literal of its own dtype and shape; accept
// sees the shape before any data is read (and so before it is allocated).
func readNpy(r io.Reader, accept func(hlo.Shape) error) (*hlo.Literal, error) {
	header, err := readNpyHeader(r)
	if err != nil {
		return nil, err
	}
	shape, err := parseNpyHeader(header)
	if err != nil {
		return nil, err
	}
	if err := accept(shape); err != nil {
		return nil, err
	}
	lit := hlo.NewLiteral(shape)
	if _, err := io.ReadFull(r, lit.Bytes()); err != nil {
		return nil, fmt.Errorf("npy: %v data: %w", shape, err)
	}
	return lit, nil
}

func readNpyHeader(r io.Reader) (string, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || !bytes.Equal(pre[:6], npyMagic) {
		return "", errors.New("npy: not a .npy file (no \\x93NUMPY magic)")
	}
	var n uint32
	switch pre[6] {
	case 1:
		var n16 uint16
		if err := binary.Read(r, binary.LittleEndian, &n16); err != nil {
			return "", fmt.Errorf("npy: header length: %w", err)
		}
		n = uint32(n16)
	case 2, 3:
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return "", fmt.Errorf("npy: header length: %w", err)
		}
	default:
		return "", fmt.Errorf("npy: format version %d.%d is not one vkxla reads (1–3)", pre[6], pre[7])
	}
	if n > 1<<20 {
		return "", fmt.Errorf("npy: a header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return "", fmt.Errorf("npy: header: %w", err)
	}
	return string(h), nil
}

// parseNpyHeader reads the dtype and shape of a C-ordered little-endian array.
func parseNpyHeader(h string) (hlo.Shape, error) {
	d, f, s := npyDescr.FindStringSubmatch(h), npyFortran.FindStringSubmatch(h), npyShape.FindStringSubmatch(h)
	if d == nil || f == nil || s == nil {
		return hlo.Shape{}, fmt.Errorf("npy: header %q lacks descr, fortran_order or shape", h)
	}
	dt, err := npyDType(d[1], d[2])
	if err != nil {
		return hlo.Shape{}, err
	}
	if f[1] == "True" {
		return hlo.Shape{}, errors.New("npy: a Fortran-ordered array (save it C-ordered: np.ascontiguousarray)")
	}
	var dims []int64
	for _, part := range strings.Split(s[1], ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 0 {
			return hlo.Shape{}, fmt.Errorf("npy: shape (%s)", s[1])
		}
		dims = append(dims, n)
	}
	shape := hlo.MakeShape(dt, dims...)
	if _, err := shape.ByteSizeChecked(); err != nil {
		return hlo.Shape{}, fmt.Errorf("npy: %w", err)
	}
	return shape, nil
}

// npyDType is the dtype of a plain descr (a byte order, then a type code); a
// structured descr, another byte order or a type vkxla lacks is an error naming it.
func npyDType(descr, structured string) (hlo.DType, error) {
	if structured != "" {
		return hlo.Invalid, fmt.Errorf("npy: a structured dtype %s is not one vkxla reads (one array per file)", structured)
	}
	code := strings.TrimLeft(descr, "<>|=")
	dt, ok := npyTypes[code]
	if ok && !strings.HasPrefix(descr, ">") {
		return dt, nil
	}
	kind := ""
	if code != "" && npyKinds[code[0]] != "" {
		kind = " (" + npyKinds[code[0]] + ")"
	}
	return hlo.Invalid, fmt.Errorf("npy: dtype %s%s is not one vkxla reads (little-endian b1, i1–i8, u1–u8, f2–f8)", descr, kind)
}

// writeNpy encodes a literal as a version-1 .npy file (tests write inputs with it).
func writeNpy(w io.Writer, lit *hlo.Literal) error {
	code := ""
	for c, dt := range npyTypes {
		if dt == lit.DType() {
			code = c
		}
	}
	if code == "" {
		return fmt.Errorf("npy: %v has no NumPy dtype", lit.DType())
	}
	dims := make([]string, len(lit.Shape().Dims))
	for i, d := range lit.Shape().Dims {
		dims[i] = strconv.FormatInt(d, 10) + ","
	}
	h := fmt.Sprintf("{'descr': '<%s', 'fortran_order': False, 'shape': (%s), }", code, strings.Join(dims, " "))
	h += strings.Repeat(" ", 63-(len(h)+10)%64) + "\n" // the data starts 64-byte aligned
	var pre bytes.Buffer
	pre.Write(npyMagic)
	pre.Write([]byte{1, 0})
	binary.Write(&pre, binary.LittleEndian, uint16(len(h)))
	pre.WriteString(h)
	pre.Write(lit.Bytes())
	_, err := w.Write(pre.Bytes())
	return err
}
