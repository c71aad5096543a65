package passes

import (
	"fmt"

	"github.com/vkxla/vkxla/hlo"
)

// nameSet is the computation and instruction names in use in a module, for passes
// that add instructions or computations under names of their own.
type nameSet map[string]bool

func moduleNames(m *hlo.Module) nameSet {
	s := nameSet{}
	for _, c := range m.Computations {
		s[c.Name] = true
		for _, in := range c.Instructions {
			s[in.Name] = true
		}
	}
	return s
}

// fresh returns base, or base.N for the smallest N that is unused, and reserves it.
func (s nameSet) fresh(base string) string {
	name := base
	for n := 1; s[name]; n++ {
		name = fmt.Sprintf("%s.%d", base, n)
	}
	s[name] = true
	return name
}
