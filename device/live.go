package device

// LiveObjects counts the device's buffers, kernels and command buffers that are not
// yet freed. Close frees them all anyway; the count lets a test check that a layer
// above (an arena, a runtime) released everything it created before the device goes.
func (d *Device) LiveObjects() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.children)
}
