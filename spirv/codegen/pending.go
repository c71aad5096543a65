package codegen

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

func useTreeReduce(*hlo.Instruction, Target) bool { return false }
func useGEMM(*hlo.Instruction, Target) bool       { return false }
func (l *lowering) lowerTreeReduce() error        { return nil }
func (l *lowering) lowerGEMM() error              { return nil }
func (l *lowering) lowerScatter() error {
	return fmt.Errorf("%s: scatter lowering is in progress", l.c.Root.Name)
}
func (l *lowering) lowerSort() error {
	return fmt.Errorf("%s: sort lowering is in progress", l.c.Root.Name)
}
