package passes

import (
	"strconv"

	"github.com/vkxla/vkxla/hlo"
)

// nameSet is the computation and instruction names in use in a module, for passes
// that add instructions or computations under names of their own.
type nameSet struct {
	used map[string]bool
	// next is, per base, the suffix to try first: every smaller one is taken (names
	// are never given back), so fresh names of one base cost O(1) each, not O(n).
	next map[string]int
}

func moduleNames(m *hlo.Module) *nameSet {
	s := &nameSet{used: map[string]bool{}, next: map[string]int{}}
	for _, c := range m.Computations {
		s.used[c.Name] = true
		for _, in := range c.Instructions {
			s.used[in.Name] = true
		}
	}
	return s
}

// fresh returns base, or base.N for the smallest N that is unused, and reserves it.
func (s *nameSet) fresh(base string) string {
	name := base
	if s.used[name] {
		n := max(s.next[base], 1)
		for s.used[base+"."+strconv.Itoa(n)] {
			n++
		}
		name = base + "." + strconv.Itoa(n)
		s.next[base] = n + 1
	}
	s.used[name] = true
	return name
}
