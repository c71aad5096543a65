package passes

import "github.com/vkxla/vkxla/hlo"

// ExpandCustomCalls replaces every custom-call by the decomposition its target's
// registry entry builds (hlo.RegisterCustomCall); an unregistered target is an
// error wrapping hlo.ErrUnknownCustomCall that names the target and the call.
func ExpandCustomCalls(m *hlo.Module, _ Config) (bool, error) {
	return expandEach(m, isOp(hlo.OpCustomCall), hlo.ExpandCustomCall)
}
