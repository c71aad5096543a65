package hlo

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The HLO text lexer. It is pulled by the parser one token at a time, so that the few
// context-dependent spellings of XLA's syntax (padding=0_0x1_1, dim_labels=b01f_01io->b01f,
// window sizes 3x3, layouts, ignored attribute values) can be read as raw text by the
// parser instead of being forced through one token grammar.

type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokName           // identifier, optionally %-prefixed: %add.1, f32, get-tuple-element
	tokNumber         // -12, 1.5e-3, -inf, -nan (inf and nan alone lex as names)
	tokString         // "…" with backslash escapes
	tokPunct          // ( ) { } [ ] , = : -> ...
	tokOther          // any other character, reported in errors
)

type token struct {
	kind tokKind
	text string
	pos  int // byte offset of the token's first character
}

// describe renders a token for "found …" in error messages.
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	text := t.text
	if len(text) > 40 {
		text = text[:40] + "…"
	}
	return strconv.Quote(text)
}

// lexer scans src from pos; whitespace and comments between tokens are skipped.
type lexer struct {
	src string
	pos int
}

// skipSpace skips whitespace, /* … */ comments and // line comments.
func (lx *lexer) skipSpace() {
	for lx.pos < len(lx.src) {
		c := lx.src[lx.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			lx.pos++
		case strings.HasPrefix(lx.src[lx.pos:], "/*"):
			end := strings.Index(lx.src[lx.pos+2:], "*/")
			if end < 0 {
				lx.pos = len(lx.src)
				return
			}
			lx.pos += end + 4
		case strings.HasPrefix(lx.src[lx.pos:], "//"):
			end := strings.IndexByte(lx.src[lx.pos:], '\n')
			if end < 0 {
				lx.pos = len(lx.src)
				return
			}
			lx.pos += end + 1
		default:
			return
		}
	}
}

// peek returns the next token without consuming it.
func (lx *lexer) peek() token {
	lx.skipSpace()
	return lx.scan(lx.pos)
}

// next consumes and returns the next token.
func (lx *lexer) next() token {
	t := lx.peek()
	lx.pos = t.pos + len(t.text)
	return t
}

// scan lexes one token at start (which is not whitespace).
func (lx *lexer) scan(start int) token {
	src := lx.src
	if start >= len(src) {
		return token{kind: tokEOF, pos: len(src)}
	}
	c := src[start]
	switch {
	case isNameStart(c) || (c == '%' && start+1 < len(src) && isNameStart(src[start+1])):
		return token{tokName, src[start:scanWhile(src, start+1, isNameChar)], start}
	case isDigit(c) || ((c == '-' || c == '+') && start+1 < len(src) && (isDigit(src[start+1]) || isNameStart(src[start+1]))):
		return token{tokNumber, src[start:scanNumber(src, start)], start}
	case c == '"':
		return token{tokString, src[start:scanString(src, start)], start}
	case strings.HasPrefix(src[start:], "->"):
		return token{tokPunct, "->", start}
	case strings.HasPrefix(src[start:], "..."):
		return token{tokPunct, "...", start}
	case strings.IndexByte("(){}[],=:", c) >= 0:
		return token{tokPunct, src[start : start+1], start}
	}
	_, size := utf8.DecodeRuneInString(src[start:])
	return token{tokOther, src[start : start+size], start}
}

func isNameStart(c byte) bool { return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
func isNameChar(c byte) bool  { return isNameStart(c) || isDigit(c) || c == '.' || c == '-' }

func scanWhile(src string, i int, ok func(byte) bool) int {
	for i < len(src) && ok(src[i]) {
		i++
	}
	return i
}

// scanNumber scans a sign, then digits, '.', exponents and letters (inf, nan, 0x…);
// the literal parser validates the text.
func scanNumber(src string, i int) int {
	i++ // the sign or first digit
	for i < len(src) {
		c := src[i]
		switch {
		case isDigit(c) || isNameStart(c) || c == '.':
			i++
		case (c == '-' || c == '+') && (src[i-1] == 'e' || src[i-1] == 'E'):
			i++
		default:
			return i
		}
	}
	return i
}

// scanString returns the end of a quoted string starting at i (or len(src) when the
// string is unterminated; the parser reports that).
func scanString(src string, i int) int {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(src)
}

// atom reads raw text up to whitespace, ',', ')' or '}' (possibly empty): the values
// of padding=, dim_labels= and window fields. It does not look past the end of the
// line, so that the empty padding of a rank-0 pad ("padding=" at the end of a line)
// does not swallow the next instruction.
func (lx *lexer) atom() (string, int) {
	lx.pos = scanWhile(lx.src, lx.pos, func(c byte) bool { return c == ' ' || c == '\t' })
	start := lx.pos
	lx.pos = scanWhile(lx.src, lx.pos, func(c byte) bool {
		return !(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == ')' || c == '}')
	})
	return lx.src[start:lx.pos], start
}

// skipBalanced skips one bracketed group starting at the current '{', '[' or '(',
// honouring nested brackets of every kind and quoted strings. It reports whether the
// group was closed.
func (lx *lexer) skipBalanced() bool {
	depth := 0
	for lx.pos < len(lx.src) {
		switch lx.src[lx.pos] {
		case '{', '[', '(':
			depth++
		case '}', ']', ')':
			depth--
			if depth == 0 {
				lx.pos++
				return true
			}
		case '"':
			lx.pos = scanString(lx.src, lx.pos)
			continue
		}
		lx.pos++
	}
	return false
}

// lineCol converts a byte offset to a 1-based line and column (in characters).
func (lx *lexer) lineCol(pos int) (line, col int) {
	if pos > len(lx.src) {
		pos = len(lx.src)
	}
	lineStart := strings.LastIndexByte(lx.src[:pos], '\n') + 1
	line = strings.Count(lx.src[:lineStart], "\n") + 1
	return line, utf8.RuneCountInString(lx.src[lineStart:pos]) + 1
}

// ParseError is a syntax or semantic error in HLO text, at a 1-based line and column.
type ParseError struct {
	Line, Col int
	Msg       string
	// Err is a sentinel callers can test with errors.Is (ErrShapeTooLarge), or nil.
	Err error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }

// errorAt builds a ParseError at a byte offset.
func (lx *lexer) errorAt(pos int, format string, args ...any) *ParseError {
	line, col := lx.lineCol(pos)
	return &ParseError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}
