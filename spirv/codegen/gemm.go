package codegen

import "github.com/vkxla/vkxla/hlo"

func useGEMM(*hlo.Instruction, Target) bool { return false }
func (l *lowering) lowerGEMM() error        { return nil }
