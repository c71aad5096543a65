package hlo

// Clone deep-copies the module: computations, instructions, attributes (literals are
// immutable by convention and shared). Passes that rewrite a module work on a clone
// when the caller's module must stay as it was.
func (m *Module) Clone() *Module {
	comps := cloneComputations(m.Computations)
	c := &Module{Name: m.Name, Computations: comps, InputOutputAlias: cloneAliases(m.InputOutputAlias)}
	for i, orig := range m.Computations {
		if orig == m.Entry {
			c.Entry = comps[i]
		}
	}
	return c
}

// CanonicalText prints the module with every computation and instruction renamed by
// position (c0, c0.i3, …), so two modules that differ only in names print the same:
// the structural identity a compilation cache keys on. The module's own name is kept.
func CanonicalText(m *Module) string { return Print(canonicalClone(m)) }
