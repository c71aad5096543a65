package hlo

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
)

// Fingerprint identifies a module's structure, as CanonicalText does, without
// printing its constants: their raw bytes (and shapes) are hashed instead, so an
// 800 MB constant costs one pass of SHA-256 over its bytes, not a text rendering
// many times its size. Two modules that differ only in computation and instruction
// names have the same fingerprint; any difference in a constant's bytes changes it.
func Fingerprint(m *Module) [32]byte {
	h := sha256.New()
	c := canonicalClone(m)
	for _, comp := range c.Computations {
		for _, in := range comp.Instructions {
			if in.Op != OpConstant {
				continue
			}
			// The clone shares the literal with m; only the clone's reference is
			// dropped, so the text below prints the constant as "{...}".
			fmt.Fprintf(h, "%s=", in.Name)
			hashLiteral(h, in.Attrs.Literal)
			in.Attrs.Literal = nil
		}
	}
	io.WriteString(h, Print(c))
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// hashLiteral writes each leaf's shape, length and bytes, so that no two different
// literals write the same stream.
func hashLiteral(h hash.Hash, l *Literal) {
	if l == nil {
		io.WriteString(h, "nil;")
		return
	}
	for _, leaf := range l.Leaves() {
		io.WriteString(h, leaf.Shape().String())
		binary.Write(h, binary.LittleEndian, int64(len(leaf.Bytes())))
		h.Write(leaf.Bytes())
	}
	io.WriteString(h, ";")
}

// canonicalClone is a copy of m with every computation and instruction renamed by
// position (c0, c0.i3, …): the structural identity CanonicalText prints and
// Fingerprint hashes. Literals are shared with m.
func canonicalClone(m *Module) *Module {
	c := m.Clone()
	for i, comp := range c.Computations {
		comp.Name = fmt.Sprintf("c%d", i)
		for j, in := range comp.Instructions {
			in.Name = fmt.Sprintf("c%d.i%d", i, j)
		}
	}
	return c
}
