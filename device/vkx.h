// vkx: the C half of the device binding. Every Vulkan struct is built here; Go passes
// only scalars, pointers to these malloc'd objects, and pointer-free arrays. That keeps
// the cgo pointer rules trivially satisfied (cgocheck2) and means no Go memory is ever
// retained by C after a call returns.
#ifndef VKX_H
#define VKX_H

#define VK_NO_PROTOTYPES
#include <stdint.h>
#include <stddef.h>
#include <vulkan/vulkan.h>

// vkx_err names the Vulkan call that failed (a static string) with its result.
typedef struct {
	VkResult res;
	const char *call;
} vkx_err;

typedef struct vkx_instance vkx_instance;
typedef struct vkx_device vkx_device;
typedef struct vkx_buffer vkx_buffer;
typedef struct vkx_kernel vkx_kernel;
typedef struct vkx_cmd vkx_cmd;

#define VKX_MAX_HEAPS 16
#define VKX_MAX_TYPES 32

// vkx_caps is filled by vkx_query_caps; it holds no pointers so Go may allocate it.
typedef struct {
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	char driver_name[VK_MAX_DRIVER_NAME_SIZE];
	char driver_info[VK_MAX_DRIVER_INFO_SIZE];
	uint32_t vendor_id, device_id, device_type, api_version, driver_version, driver_id;

	uint32_t subgroup_size, subgroup_ops, subgroup_stages;
	uint32_t min_subgroup_size, max_subgroup_size;

	uint32_t max_shared, max_wg_size[3], max_wg_invocations, max_wg_count[3];
	uint32_t max_storage_range, max_push, max_bound_sets, max_storage_buffers_per_stage;
	uint64_t max_alloc, min_storage_align, non_coherent_atom;
	uint32_t max_texel_elements, max_sampled_per_stage, max_resources_per_stage;
	uint64_t min_texel_align;
	uint32_t texel_formats; // bit f: vkx_texel_format(f) can be read as a uniform texel buffer
	float timestamp_period;
	uint32_t timestamp_bits; // of the chosen queue family; 0: no timestamps
	uint32_t queue_family;   // UINT32_MAX: no compute queue

	uint32_t heap_count, heap_flags[VKX_MAX_HEAPS];
	uint64_t heap_size[VKX_MAX_HEAPS];
	uint32_t type_count, type_flags[VKX_MAX_TYPES], type_heap[VKX_MAX_TYPES];

	// Features (0/1).
	uint32_t f_float64, f_int64, f_int16;
	uint32_t f_float16, f_int8;
	uint32_t f_sb16, f_ubo16, f_push16;
	uint32_t f_sb8, f_ubo8, f_push8;
	uint32_t f_atomic_float32_add, f_atomic_float64_add;
	uint32_t f_subgroup_size_control, f_full_subgroups;
	uint32_t f_memory_model;
	uint32_t f_buffer_device_address;

	// Float controls (VkPhysicalDeviceFloatControlsProperties), per width f16, f32, f64.
	uint32_t fc_known;
	uint32_t fc_denorm_preserve[3], fc_denorm_ftz[3], fc_szinp[3], fc_rte[3];
} vkx_caps;

// The formats uniform texel buffers are read with (Go's TexelFormat values); 0 is
// none. vkx_texel_format maps them to VkFormat.
enum { VKX_TEXEL_RGBA32U = 1, VKX_TEXEL_RGBA16U, VKX_TEXEL_R32U, VKX_TEXEL_R16U, VKX_TEXEL_END };
VkFormat vkx_texel_format(uint32_t f);

// vkx_range is one binding of a dispatch: a storage buffer, or the range a uniform
// texel buffer's view covers. buf is a vkx_buffer* carried as an integer so that the
// Go array holding it is pointer-free.
typedef struct {
	uintptr_t buf;
	uint64_t offset, size;
} vkx_range;

// Messages from the debug-utils messenger go to this Go function, with the cgo.Handle
// given at instance creation.
extern void vkxGoMessage(uintptr_t handle, int severity, char *message);

int vkx_loader_available(void);
vkx_err vkx_instance_create(int validation, uintptr_t handle, vkx_instance **out);
void vkx_instance_destroy(vkx_instance *in);
uint32_t vkx_physical_count(vkx_instance *in);
void vkx_query_caps(vkx_instance *in, uint32_t index, vkx_caps *c);

vkx_err vkx_device_create(vkx_instance *in, uint32_t index, vkx_device **out);
void vkx_device_destroy(vkx_device *d);
vkx_err vkx_device_wait_idle(vkx_device *d);

vkx_err vkx_buffer_create(vkx_device *d, uint64_t size, const uint32_t *types, uint32_t ntypes,
			  uint32_t mappable, vkx_buffer **out, void **mapped, uint32_t *type);
void vkx_buffer_destroy(vkx_device *d, vkx_buffer *b);
// vkx_buffer_address is the buffer's device address (vkGetBufferDeviceAddress), 0
// when the device was created without bufferDeviceAddress.
uint64_t vkx_buffer_address(vkx_device *d, vkx_buffer *b);
// vkx_device_addresses reports whether bufferDeviceAddress is enabled.
int vkx_device_addresses(vkx_device *d);

vkx_err vkx_kernel_create(vkx_device *d, const uint32_t *code, size_t size, const char *entry,
			  uint32_t bindings, const uint32_t *texels, uint32_t ntexels, uint32_t push_size,
			  const uint32_t *spec, uint32_t nspec, vkx_kernel **out);
void vkx_kernel_destroy(vkx_device *d, vkx_kernel *k);

vkx_err vkx_cmd_create(vkx_device *d, vkx_cmd **out);
void vkx_cmd_destroy(vkx_device *d, vkx_cmd *c);
vkx_err vkx_cmd_timestamps(vkx_device *d, vkx_cmd *c, uint32_t n);
vkx_err vkx_cmd_begin(vkx_device *d, vkx_cmd *c);
vkx_err vkx_cmd_end(vkx_device *d, vkx_cmd *c);
vkx_err vkx_cmd_reset(vkx_device *d, vkx_cmd *c);
// vkx_cmd_release_views destroys the buffer views the recording's dispatches made;
// the recording must be discarded (not in flight, not to be submitted again).
void vkx_cmd_release_views(vkx_device *d, vkx_cmd *c);
uint32_t vkx_cmd_view_count(vkx_cmd *c);
// vkx_cmd_descriptor_room is the room of the command buffer's descriptor pools
// together, per descriptor type (tests).
void vkx_cmd_descriptor_room(vkx_cmd *c, uint64_t *storage, uint64_t *texels);
vkx_err vkx_cmd_dispatch(vkx_device *d, vkx_cmd *c, vkx_kernel *k, const vkx_range *ranges, uint32_t n,
			 const void *push, uint32_t push_size, uint32_t x, uint32_t y, uint32_t z);
void vkx_cmd_barrier(vkx_device *d, vkx_cmd *c);
void vkx_cmd_copy(vkx_device *d, vkx_cmd *c, vkx_buffer *src, uint64_t src_off, vkx_buffer *dst,
		  uint64_t dst_off, uint64_t size);
void vkx_cmd_fill(vkx_device *d, vkx_cmd *c, vkx_buffer *b, uint64_t off, uint64_t size, uint32_t value);
void vkx_cmd_timestamp(vkx_device *d, vkx_cmd *c, uint32_t index);
vkx_err vkx_cmd_read_timestamps(vkx_device *d, vkx_cmd *c, uint32_t n, uint64_t *out);

vkx_err vkx_submit(vkx_device *d, vkx_cmd *c);
vkx_err vkx_wait(vkx_device *d, vkx_cmd *c, uint64_t timeout_ns);

#endif
