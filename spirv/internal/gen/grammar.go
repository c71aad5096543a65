package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// coreGrammar is the part of spirv.core.grammar.json that the generator reads.
type coreGrammar struct {
	Major        int           `json:"major_version"`
	Minor        int           `json:"minor_version"`
	Revision     int           `json:"revision"`
	Instructions []instruction `json:"instructions"`
	OperandKinds []operandKind `json:"operand_kinds"`
}

// extGrammar is an extended instruction set grammar (GLSL.std.450).
type extGrammar struct {
	Version      int           `json:"version"`
	Revision     int           `json:"revision"`
	Instructions []instruction `json:"instructions"`
}

type instruction struct {
	Name     string    `json:"opname"`
	Class    string    `json:"class"`
	Opcode   uint32    `json:"opcode"`
	Operands []operand `json:"operands"`
}

type operand struct {
	Kind       string `json:"kind"`
	Quantifier string `json:"quantifier"`
	Name       string `json:"name"`
}

type operandKind struct {
	Category   string      `json:"category"`
	Kind       string      `json:"kind"`
	Enumerants []enumerant `json:"enumerants"`
}

type enumerant struct {
	Name  string    `json:"enumerant"`
	Value enumValue `json:"value"`
}

// enumValue accepts both JSON numbers (value enums) and hex strings such as
// "0x0004" (bit enums), which is how the grammar spells the two.
type enumValue uint32

func (v *enumValue) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	n, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		return fmt.Errorf("enumerant value %s: %w", b, err)
	}
	*v = enumValue(n)
	return nil
}

func readJSON(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
