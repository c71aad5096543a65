package device

// SetForceStaging makes later NewBuffer calls allocate buffers that are not mapped,
// so tests on a unified-memory device (lavapipe) exercise the staging path.
func SetForceStaging(d *Device, on bool) { d.forceStaging = on }

// LeakOnClose makes Close forget the device's open objects instead of freeing them,
// so a test can check that the validation layer reports leaks.
func LeakOnClose(d *Device) {
	d.mu.Lock()
	clear(d.children)
	d.mu.Unlock()
}

// SetDispatchCheckedHook runs f inside each Dispatch between its checks and its
// taking hold of the kernel and buffers; nil restores the default.
func SetDispatchCheckedHook(f func()) {
	if f == nil {
		f = func() {}
	}
	testHookDispatchChecked = f
}

// TexelViews counts the buffer views cb's recording holds.
func TexelViews(cb *CommandBuffer) int { return cb.texelViews() }

// DescriptorRoom is the room of cb's descriptor pools together, in storage buffer
// and uniform texel buffer descriptors.
func DescriptorRoom(cb *CommandBuffer) (storage, texels int64) { return cb.descriptorRoom() }

// EditCaps changes the capabilities the device checks requests against (not the
// device's own limits), so a test can reach a limit without allocating up to it.
func EditCaps(d *Device, edit func(*Caps)) { edit(&d.caps) }
