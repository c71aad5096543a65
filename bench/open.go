package bench

import (
	"fmt"
	"regexp"

	"github.com/vkxla/vkxla"
)

// Open is what the benchmark commands start with: the -only filter compiled and a
// runtime on the default device, with the validation layer when asked.
func Open(only string, validation bool) (*regexp.Regexp, *vkxla.Runtime, error) {
	filter, err := regexp.Compile(only)
	if err != nil {
		return nil, nil, fmt.Errorf("-only: %w", err)
	}
	rt, err := vkxla.NewRuntime(vkxla.WithValidation(validation))
	if err != nil {
		return nil, nil, err
	}
	return filter, rt, nil
}
