package codegen

import "fmt"

func (l *lowering) lowerScatter() error {
	return fmt.Errorf("%s: scatter lowering is in progress", l.c.Root.Name)
}
func (l *lowering) lowerSort() error {
	return fmt.Errorf("%s: sort lowering is in progress", l.c.Root.Name)
}
