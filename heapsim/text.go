package heapsim

import (
	"fmt"
	"math"
	"strings"
)

// planText prints a plan: the steps of every block with their timeline positions,
// every buffer (role, place, lifetime, the buffer it is written in place over),
// the statistics and the buffers live at the peak. It is VKXLA_DUMP's 10-plan.txt,
// `vkxla compile`'s output and the golden tests' text.
func planText(l *lowering, main *Block) string {
	var sb strings.Builder
	sb.WriteString("steps:\n")
	writeSteps(&sb, main, "  ")
	sb.WriteString("buffers:\n")
	for i, r := range l.plan.Ranges {
		fmt.Fprintf(&sb, "%4d %-10s %v", i, l.kinds[i], r)
		if l.shares[i] >= 0 {
			fmt.Fprintf(&sb, " in place over %d", l.shares[i])
		}
		switch l.ext[i] {
		case extDonated:
			sb.WriteString(" donated")
		case extBorrowed:
			sb.WriteString(" borrowed")
		}
		if l.onHost(i) {
			sb.WriteString(" on the host")
		}
		switch {
		case r.Split:
			sb.WriteString(" split across bindings")
		case r.Addressed:
			sb.WriteString(" by device address")
		}
		fmt.Fprintf(&sb, " live %s\n", lifeText(l.lives[i]))
	}
	fmt.Fprintf(&sb, "%v\n", memoryStats(l))
	sb.WriteString("live at the peak:\n")
	for _, b := range livePeak(l) {
		fmt.Fprintf(&sb, "  %v\n", b)
	}
	return sb.String()
}

// lifeText prints a lifetime: "in" is before the first step (parameters), "out"
// after the last for a constant's endless life.
func lifeText(lt lifetime) string {
	end := fmt.Sprint(lt.last)
	if lt.last == math.MaxInt {
		end = "end"
	}
	return fmt.Sprintf("[%d, %s]", lt.first, end)
}

func writeSteps(sb *strings.Builder, b *Block, indent string) {
	for _, st := range b.Steps {
		fmt.Fprintf(sb, "%s@%d %s %s", indent, st.at, st.Kind, st.Name)
		switch st.Kind {
		case StepDispatch:
			fmt.Fprintf(sb, " kernel %s args %v groups %v\n", st.Kernel.Kernel.Name, st.Args, st.Groups)
		case StepCopy:
			fmt.Fprintf(sb, " %d -> %d\n", st.Src, st.Dst)
		case StepCollective:
			fmt.Fprintf(sb, " host %v args %v outs %v\n", st.Instr.Op, st.Args, st.Outs)
		case StepWhile:
			fmt.Fprintf(sb, " pred %d\n%s cond:\n", st.Pred, indent)
			writeSteps(sb, st.Cond, indent+"  ")
			fmt.Fprintf(sb, "%s body:\n", indent)
			writeSteps(sb, st.Body, indent+"  ")
		case StepConditional:
			fmt.Fprintf(sb, " index %d\n", st.Index)
			for i, br := range st.Branches {
				fmt.Fprintf(sb, "%s branch %d:\n", indent, i)
				writeSteps(sb, br, indent+"  ")
			}
		}
	}
}
