package device

/*
#include "vkx.h"
*/
import "C"

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of this package that stands for one of them matches it
// with errors.Is.
var (
	ErrOutOfDeviceMemory = errors.New("device: out of device memory")
	ErrOutOfHostMemory   = errors.New("device: out of host memory")
	ErrDeviceLost        = errors.New("device: device lost")
	// ErrNoDevice: no Vulkan loader, no driver, or no device matching the selector.
	ErrNoDevice = errors.New("device: no Vulkan device")
	// ErrClosed: the object, or the device it belongs to, has been closed.
	ErrClosed = errors.New("device: use of closed object")
	// ErrInvalidArgument: a kernel whose SPIR-V is malformed or disagrees with its spec,
	// or a spec or command outside the device's limits.
	ErrInvalidArgument = errors.New("device: invalid argument")
)

// Result is a VkResult.
type Result int32

var resultNames = map[Result]string{
	0: "VK_SUCCESS", 1: "VK_NOT_READY", 2: "VK_TIMEOUT", 3: "VK_EVENT_SET", 4: "VK_EVENT_RESET",
	5: "VK_INCOMPLETE", -1: "VK_ERROR_OUT_OF_HOST_MEMORY", -2: "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	-3: "VK_ERROR_INITIALIZATION_FAILED", -4: "VK_ERROR_DEVICE_LOST", -5: "VK_ERROR_MEMORY_MAP_FAILED",
	-6: "VK_ERROR_LAYER_NOT_PRESENT", -7: "VK_ERROR_EXTENSION_NOT_PRESENT",
	-8: "VK_ERROR_FEATURE_NOT_PRESENT", -9: "VK_ERROR_INCOMPATIBLE_DRIVER",
	-10: "VK_ERROR_TOO_MANY_OBJECTS", -11: "VK_ERROR_FORMAT_NOT_SUPPORTED",
	-12: "VK_ERROR_FRAGMENTED_POOL", -13: "VK_ERROR_UNKNOWN",
	-1000069000: "VK_ERROR_OUT_OF_POOL_MEMORY", -1000161000: "VK_ERROR_FRAGMENTATION",
	-1000011001: "VK_ERROR_VALIDATION_FAILED_EXT", -1000012000: "VK_ERROR_INVALID_SHADER_NV",
}

func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return fmt.Sprintf("VkResult(%d)", int32(r))
}

// VkError is a failed Vulkan call: "device: vkAllocateMemory: VK_ERROR_OUT_OF_DEVICE_MEMORY".
type VkError struct {
	Call   string
	Result Result
}

func (e *VkError) Error() string { return "device: " + e.Call + ": " + e.Result.String() }

// Is maps results onto the sentinel errors.
func (e *VkError) Is(target error) bool {
	switch target {
	case ErrOutOfDeviceMemory:
		return e.Result == -2
	case ErrOutOfHostMemory:
		return e.Result == -1
	case ErrDeviceLost:
		return e.Result == -4
	case ErrNoDevice:
		// No loader, or a loader without any driver.
		return e.Result == -9 || (e.Result == -3 && e.Call == "dlopen(libvulkan.so.1)")
	}
	return false
}

// check turns a vkx_err into a Go error (nil on success).
func check(e C.vkx_err) error {
	if e.res == C.VK_SUCCESS {
		return nil
	}
	return &VkError{Call: C.GoString(e.call), Result: Result(e.res)}
}
