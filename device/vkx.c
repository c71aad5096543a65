// vkx.c: the C half of the device binding (see vkx.h). The loader is opened with
// dlopen at run time, so building needs only the headers (libvulkan-dev) and running
// without a Vulkan loader fails cleanly with an error instead of at link time.
#include "vkx.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define OK ((vkx_err){VK_SUCCESS, NULL})
#define FAIL(r, name) ((vkx_err){(r), (name)})
// CHECK returns the failing call's name with its result.
#define CHECK(call, name)                     \
	do {                                  \
		VkResult r_ = (call);         \
		if (r_ != VK_SUCCESS)         \
			return FAIL(r_, name); \
	} while (0)

// ---- function tables ----

#define VKX_INSTANCE_FUNCS(X)                      \
	X(vkDestroyInstance)                       \
	X(vkEnumeratePhysicalDevices)              \
	X(vkGetPhysicalDeviceProperties)           \
	X(vkGetPhysicalDeviceProperties2)          \
	X(vkGetPhysicalDeviceFeatures2)            \
	X(vkGetPhysicalDeviceFormatProperties)     \
	X(vkGetPhysicalDeviceMemoryProperties)     \
	X(vkGetPhysicalDeviceQueueFamilyProperties) \
	X(vkEnumerateDeviceExtensionProperties)    \
	X(vkCreateDevice)                          \
	X(vkGetDeviceProcAddr)

#define VKX_DEVICE_FUNCS(X)           \
	X(vkDestroyDevice)            \
	X(vkGetDeviceQueue)           \
	X(vkDeviceWaitIdle)           \
	X(vkCreateBuffer)             \
	X(vkDestroyBuffer)            \
	X(vkCreateBufferView)         \
	X(vkDestroyBufferView)        \
	X(vkGetBufferMemoryRequirements) \
	X(vkAllocateMemory)           \
	X(vkFreeMemory)               \
	X(vkBindBufferMemory)         \
	X(vkMapMemory)                \
	X(vkUnmapMemory)              \
	X(vkCreateShaderModule)       \
	X(vkDestroyShaderModule)      \
	X(vkCreateDescriptorSetLayout) \
	X(vkDestroyDescriptorSetLayout) \
	X(vkCreatePipelineLayout)     \
	X(vkDestroyPipelineLayout)    \
	X(vkCreatePipelineCache)      \
	X(vkDestroyPipelineCache)     \
	X(vkCreateComputePipelines)   \
	X(vkDestroyPipeline)          \
	X(vkCreateDescriptorPool)     \
	X(vkDestroyDescriptorPool)    \
	X(vkResetDescriptorPool)      \
	X(vkAllocateDescriptorSets)   \
	X(vkUpdateDescriptorSets)     \
	X(vkCreateCommandPool)        \
	X(vkDestroyCommandPool)       \
	X(vkResetCommandPool)         \
	X(vkAllocateCommandBuffers)   \
	X(vkBeginCommandBuffer)       \
	X(vkEndCommandBuffer)         \
	X(vkCmdBindPipeline)          \
	X(vkCmdBindDescriptorSets)    \
	X(vkCmdPushConstants)         \
	X(vkCmdDispatch)              \
	X(vkCmdPipelineBarrier)       \
	X(vkCmdCopyBuffer)            \
	X(vkCmdFillBuffer)            \
	X(vkCmdWriteTimestamp)        \
	X(vkCmdResetQueryPool)        \
	X(vkCreateQueryPool)          \
	X(vkDestroyQueryPool)         \
	X(vkGetQueryPoolResults)      \
	X(vkCreateFence)              \
	X(vkDestroyFence)             \
	X(vkResetFences)              \
	X(vkWaitForFences)            \
	X(vkQueueSubmit)

#define DECLARE(name) PFN_##name name;

struct vkx_instance {
	VkInstance instance;
	VkDebugUtilsMessengerEXT messenger;
	PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger;
	uint32_t api; // the instance's API version
	uint32_t nphys;
	VkPhysicalDevice *phys;
	VKX_INSTANCE_FUNCS(DECLARE)
};

struct vkx_device {
	VkDevice dev;
	VkQueue queue;
	VkPipelineCache cache;
	// get_address is vkGetBufferDeviceAddress (core 1.2, or the KHR extension's),
	// NULL when bufferDeviceAddress is not enabled: buffers then get neither the
	// usage nor the allocation flag.
	PFN_vkGetBufferDeviceAddress get_address;
	VKX_DEVICE_FUNCS(DECLARE)
};

struct vkx_buffer {
	VkBuffer buf;
	VkDeviceMemory mem;
};

// A kernel's set 0 holds bindings storage buffers, then texels uniform texel buffers
// of formats[0..texels-1].
struct vkx_kernel {
	VkDescriptorSetLayout dsl; // VK_NULL_HANDLE when the kernel has no bindings
	VkPipelineLayout layout;
	VkPipeline pipe;
	uint32_t bindings, texels, push;
	VkFormat *formats;
};

// A descriptor pool with the room left in it, per descriptor type (storage buffers,
// uniform texel buffers); pools are reset when recording restarts.
typedef struct {
	VkDescriptorPool pool;
	uint32_t sets, descs, texels, sets_left, descs_left, texels_left;
} vkx_dpool;

struct vkx_cmd {
	VkCommandPool pool;
	VkCommandBuffer cb;
	VkFence fence;
	VkQueryPool queries;
	uint32_t nqueries;
	vkx_dpool *dpools;
	uint32_t ndpools, capdpools, curdpool;
	// The views of the recording's uniform texel buffer bindings, made at record time.
	VkBufferView *views;
	uint32_t nviews, capviews;
};

// ---- loader ----

static pthread_once_t loader_once = PTHREAD_ONCE_INIT;
static PFN_vkGetInstanceProcAddr gipa;

// The loader is opened once and never closed: unloading it (and the drivers it
// loaded, which may register atexit handlers) while the process runs buys nothing.
static void load_loader(void) {
	void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
}

int vkx_loader_available(void) {
	pthread_once(&loader_once, load_loader);
	return gipa != NULL;
}

static int has_name(const char *want, const char *const *names, uint32_t n) {
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(names[i], want) == 0)
			return 1;
	return 0;
}

// instance_ext reports whether layer (NULL: the implementation) offers extension ext.
static int instance_ext(const char *layer, const char *ext) {
	PFN_vkEnumerateInstanceExtensionProperties f =
		(PFN_vkEnumerateInstanceExtensionProperties)gipa(NULL, "vkEnumerateInstanceExtensionProperties");
	uint32_t n = 0;
	if (f(layer, &n, NULL) != VK_SUCCESS || n == 0)
		return 0;
	VkExtensionProperties *p = calloc(n, sizeof *p);
	int found = 0;
	if (p && f(layer, &n, p) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = strcmp(p[i].extensionName, ext) == 0;
	free(p);
	return found;
}

static int instance_layer(const char *layer) {
	PFN_vkEnumerateInstanceLayerProperties f =
		(PFN_vkEnumerateInstanceLayerProperties)gipa(NULL, "vkEnumerateInstanceLayerProperties");
	uint32_t n = 0;
	if (f(&n, NULL) != VK_SUCCESS || n == 0)
		return 0;
	VkLayerProperties *p = calloc(n, sizeof *p);
	int found = 0;
	if (p && f(&n, p) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = strcmp(p[i].layerName, layer) == 0;
	free(p);
	return found;
}

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
						 VkDebugUtilsMessageTypeFlagsEXT types,
						 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
	(void)types;
	vkxGoMessage((uintptr_t)user, (int)severity, (char *)(data && data->pMessage ? data->pMessage : ""));
	return VK_FALSE;
}

static VkDebugUtilsMessengerCreateInfoEXT messenger_info(uintptr_t handle) {
	VkDebugUtilsMessengerCreateInfoEXT m = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
	m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
	m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
			VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
	m.pfnUserCallback = on_message;
	m.pUserData = (void *)handle;
	return m;
}

static uint32_t loader_version(void) {
	PFN_vkEnumerateInstanceVersion f = (PFN_vkEnumerateInstanceVersion)gipa(NULL, "vkEnumerateInstanceVersion");
	uint32_t v = VK_API_VERSION_1_0;
	if (f)
		f(&v);
	return v;
}

static void load_instance_funcs(vkx_instance *in) {
#define LOAD(name) in->name = (PFN_##name)gipa(in->instance, #name);
	VKX_INSTANCE_FUNCS(LOAD)
#undef LOAD
}

static vkx_err enumerate_physical(vkx_instance *in) {
	CHECK(in->vkEnumeratePhysicalDevices(in->instance, &in->nphys, NULL), "vkEnumeratePhysicalDevices");
	in->phys = calloc(in->nphys ? in->nphys : 1, sizeof *in->phys);
	if (!in->phys)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	VkResult r = in->vkEnumeratePhysicalDevices(in->instance, &in->nphys, in->phys);
	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return FAIL(r, "vkEnumeratePhysicalDevices");
	return OK;
}

static vkx_err create_messenger(vkx_instance *in, uintptr_t handle) {
	PFN_vkCreateDebugUtilsMessengerEXT create =
		(PFN_vkCreateDebugUtilsMessengerEXT)gipa(in->instance, "vkCreateDebugUtilsMessengerEXT");
	in->destroy_messenger =
		(PFN_vkDestroyDebugUtilsMessengerEXT)gipa(in->instance, "vkDestroyDebugUtilsMessengerEXT");
	if (!create || !in->destroy_messenger)
		return FAIL(VK_ERROR_EXTENSION_NOT_PRESENT, "vkCreateDebugUtilsMessengerEXT");
	VkDebugUtilsMessengerCreateInfoEXT m = messenger_info(handle);
	CHECK(create(in->instance, &m, NULL, &in->messenger), "vkCreateDebugUtilsMessengerEXT");
	return OK;
}

vkx_err vkx_instance_create(int validation, uintptr_t handle, vkx_instance **out) {
	*out = NULL;
	if (!vkx_loader_available())
		return FAIL(VK_ERROR_INITIALIZATION_FAILED, "dlopen(libvulkan.so.1)");
	uint32_t api = loader_version();
	if (api < VK_API_VERSION_1_1)
		return FAIL(VK_ERROR_INCOMPATIBLE_DRIVER, "vkEnumerateInstanceVersion");
	if (api > VK_API_VERSION_1_3)
		api = VK_API_VERSION_1_3;

	const char *exts[4];
	uint32_t next = 0;
	VkInstanceCreateFlags flags = 0;
	if (instance_ext(NULL, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
		exts[next++] = VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME;
		flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
	}
	const char *layer = "VK_LAYER_KHRONOS_validation";
	VkDebugUtilsMessengerCreateInfoEXT minfo = messenger_info(handle);
	VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
	VkValidationFeaturesEXT features = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
	features.enabledValidationFeatureCount = 1;
	features.pEnabledValidationFeatures = enables;
	const void *pnext = NULL;
	if (validation) {
		if (!instance_layer(layer))
			return FAIL(VK_ERROR_LAYER_NOT_PRESENT, "vkCreateInstance(VK_LAYER_KHRONOS_validation)");
		exts[next++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
		// The messenger in pNext also reports on vkCreateInstance and vkDestroyInstance.
		pnext = &minfo;
		if (instance_ext(layer, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
			exts[next++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
			minfo.pNext = &features;
		}
	}

	VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
	app.pApplicationName = "vkxla";
	app.pEngineName = "vkxla";
	app.apiVersion = api;
	VkInstanceCreateInfo ci = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
	ci.pNext = pnext;
	ci.flags = flags;
	ci.pApplicationInfo = &app;
	ci.enabledLayerCount = validation ? 1 : 0;
	ci.ppEnabledLayerNames = &layer;
	ci.enabledExtensionCount = next;
	ci.ppEnabledExtensionNames = exts;

	vkx_instance *in = calloc(1, sizeof *in);
	if (!in)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	in->api = api;
	PFN_vkCreateInstance create = (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance");
	VkResult r = create(&ci, NULL, &in->instance);
	if (r != VK_SUCCESS) {
		free(in);
		return FAIL(r, "vkCreateInstance");
	}
	load_instance_funcs(in);
	vkx_err e = validation ? create_messenger(in, handle) : OK;
	if (e.res == VK_SUCCESS)
		e = enumerate_physical(in);
	if (e.res != VK_SUCCESS) {
		vkx_instance_destroy(in);
		return e;
	}
	*out = in;
	return OK;
}

void vkx_instance_destroy(vkx_instance *in) {
	if (!in)
		return;
	if (in->messenger)
		in->destroy_messenger(in->instance, in->messenger, NULL);
	in->vkDestroyInstance(in->instance, NULL);
	free(in->phys);
	free(in);
}

uint32_t vkx_physical_count(vkx_instance *in) { return in->nphys; }

// ---- physical device queries ----

// The optional feature structs vkxla queries and enables, and whether each is
// available (core in the device's version, or through its extension).
typedef struct {
	VkPhysicalDeviceFeatures2 f2;
	VkPhysicalDevice16BitStorageFeatures s16;
	VkPhysicalDeviceShaderFloat16Int8Features f16i8;
	VkPhysicalDevice8BitStorageFeatures s8;
	VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af;
	VkPhysicalDeviceSubgroupSizeControlFeatures ssc;
	VkPhysicalDeviceVulkanMemoryModelFeatures mm;
	VkPhysicalDeviceBufferDeviceAddressFeatures bda;
	int has_f16i8, has_s8, has_af, has_ssc, has_mm, has_bda, has_driver_props, has_float_controls;
	const char *exts[8]; // device extensions to enable for them
	uint32_t next;
} vkx_features;

static uint32_t effective_api(vkx_instance *in, VkPhysicalDevice p) {
	VkPhysicalDeviceProperties props;
	in->vkGetPhysicalDeviceProperties(p, &props);
	return props.apiVersion < in->api ? props.apiVersion : in->api;
}

static int device_ext(vkx_instance *in, VkPhysicalDevice p, const char *ext) {
	uint32_t n = 0;
	if (in->vkEnumerateDeviceExtensionProperties(p, NULL, &n, NULL) != VK_SUCCESS || n == 0)
		return 0;
	VkExtensionProperties *e = calloc(n, sizeof *e);
	int found = 0;
	if (e && in->vkEnumerateDeviceExtensionProperties(p, NULL, &n, e) == VK_SUCCESS)
		for (uint32_t i = 0; i < n && !found; i++)
			found = strcmp(e[i].extensionName, ext) == 0;
	free(e);
	return found;
}

// available reports whether a feature is core at version core (0: never core) or its
// extension is offered, and records the extension to enable when it is not core.
static int available(vkx_instance *in, VkPhysicalDevice p, vkx_features *f, uint32_t api, uint32_t core,
		     const char *ext) {
	if (core && api >= core)
		return 1;
	if (!device_ext(in, p, ext))
		return 0;
	if (!has_name(ext, f->exts, f->next))
		f->exts[f->next++] = ext;
	return 1;
}

#define LINK(s, type)              \
	do {                       \
		(s).sType = (type); \
		(s).pNext = head;  \
		head = &(s);       \
	} while (0)

static void query_features(vkx_instance *in, VkPhysicalDevice p, vkx_features *f) {
	memset(f, 0, sizeof *f);
	uint32_t api = effective_api(in, p);
	void *head = NULL;
	LINK(f->s16, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
	if ((f->has_f16i8 = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME)))
		LINK(f->f16i8, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
	if ((f->has_s8 = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_8BIT_STORAGE_EXTENSION_NAME)))
		LINK(f->s8, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
	if ((f->has_af = available(in, p, f, api, 0, VK_EXT_SHADER_ATOMIC_FLOAT_EXTENSION_NAME)))
		LINK(f->af, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_ATOMIC_FLOAT_FEATURES_EXT);
	if ((f->has_ssc = available(in, p, f, api, VK_API_VERSION_1_3, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME)))
		LINK(f->ssc, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES);
	if ((f->has_mm = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME)))
		LINK(f->mm, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES);
	// Buffer device addresses let kernels reach tensors larger than one binding
	// (PhysicalStorageBuffer64 pointers): core in 1.2, else the KHR extension.
	if ((f->has_bda = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_BUFFER_DEVICE_ADDRESS_EXTENSION_NAME)))
		LINK(f->bda, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES);
	// Float controls stay enabled: kernels request SignedZeroInfNanPreserve
	// (SPV_KHR_float_controls), which a Vulkan 1.1 device accepts only with the extension.
	f->has_float_controls = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
	// Driver properties need the extension offered, not enabled: undo its record.
	uint32_t keep = f->next;
	f->has_driver_props = available(in, p, f, api, VK_API_VERSION_1_2, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
	f->next = keep;
	// MoltenVK and other portability drivers require this extension to be enabled.
	if (device_ext(in, p, "VK_KHR_portability_subset"))
		f->exts[f->next++] = "VK_KHR_portability_subset";
	f->f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
	f->f2.pNext = head;
	in->vkGetPhysicalDeviceFeatures2(p, &f->f2);
}

// queue_family picks the first compute family, preferring one with timestamps.
static uint32_t queue_family(vkx_instance *in, VkPhysicalDevice p, uint32_t *ts_bits) {
	uint32_t n = 0;
	in->vkGetPhysicalDeviceQueueFamilyProperties(p, &n, NULL);
	VkQueueFamilyProperties *q = calloc(n ? n : 1, sizeof *q);
	uint32_t best = UINT32_MAX;
	*ts_bits = 0;
	if (!q)
		return best;
	in->vkGetPhysicalDeviceQueueFamilyProperties(p, &n, q);
	for (uint32_t i = 0; i < n; i++) {
		if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0)
			continue;
		if (best == UINT32_MAX || (*ts_bits == 0 && q[i].timestampValidBits > 0)) {
			best = i;
			*ts_bits = q[i].timestampValidBits;
		}
	}
	free(q);
	return best;
}

static void query_properties(vkx_instance *in, VkPhysicalDevice p, vkx_features *f, vkx_caps *c) {
	void *head = NULL;
	VkPhysicalDeviceSubgroupProperties sg = {0};
	VkPhysicalDeviceMaintenance3Properties m3 = {0};
	VkPhysicalDeviceDriverProperties drv = {0};
	VkPhysicalDeviceSubgroupSizeControlProperties ssc = {0};
	LINK(sg, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
	LINK(m3, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES);
	if (f->has_driver_props)
		LINK(drv, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
	if (f->has_ssc)
		LINK(ssc, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES);
	VkPhysicalDeviceFloatControlsProperties fc = {0};
	if (f->has_float_controls)
		LINK(fc, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES);
	VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
	p2.pNext = head;
	in->vkGetPhysicalDeviceProperties2(p, &p2);

	const VkPhysicalDeviceProperties *pr = &p2.properties;
	const VkPhysicalDeviceLimits *l = &pr->limits;
	memcpy(c->name, pr->deviceName, sizeof c->name);
	memcpy(c->driver_name, drv.driverName, sizeof c->driver_name);
	memcpy(c->driver_info, drv.driverInfo, sizeof c->driver_info);
	c->vendor_id = pr->vendorID;
	c->device_id = pr->deviceID;
	c->device_type = pr->deviceType;
	c->api_version = pr->apiVersion;
	c->driver_version = pr->driverVersion;
	c->driver_id = drv.driverID;
	c->subgroup_size = sg.subgroupSize;
	c->subgroup_ops = sg.supportedOperations;
	c->subgroup_stages = sg.supportedStages;
	c->min_subgroup_size = f->has_ssc ? ssc.minSubgroupSize : sg.subgroupSize;
	c->max_subgroup_size = f->has_ssc ? ssc.maxSubgroupSize : sg.subgroupSize;
	c->max_shared = l->maxComputeSharedMemorySize;
	for (int i = 0; i < 3; i++) {
		c->max_wg_size[i] = l->maxComputeWorkGroupSize[i];
		c->max_wg_count[i] = l->maxComputeWorkGroupCount[i];
	}
	c->max_wg_invocations = l->maxComputeWorkGroupInvocations;
	c->max_storage_range = l->maxStorageBufferRange;
	c->max_push = l->maxPushConstantsSize;
	c->max_bound_sets = l->maxBoundDescriptorSets;
	c->max_storage_buffers_per_stage = l->maxPerStageDescriptorStorageBuffers;
	c->max_alloc = m3.maxMemoryAllocationSize;
	c->min_storage_align = l->minStorageBufferOffsetAlignment;
	c->non_coherent_atom = l->nonCoherentAtomSize;
	c->max_texel_elements = l->maxTexelBufferElements;
	c->min_texel_align = l->minTexelBufferOffsetAlignment;
	c->max_sampled_per_stage = l->maxPerStageDescriptorSampledImages;
	c->max_resources_per_stage = l->maxPerStageResources;
	c->timestamp_period = l->timestampPeriod;
	c->queue_family = queue_family(in, p, &c->timestamp_bits);
	c->fc_known = f->has_float_controls;
	c->fc_denorm_preserve[0] = fc.shaderDenormPreserveFloat16;
	c->fc_denorm_preserve[1] = fc.shaderDenormPreserveFloat32;
	c->fc_denorm_preserve[2] = fc.shaderDenormPreserveFloat64;
	c->fc_denorm_ftz[0] = fc.shaderDenormFlushToZeroFloat16;
	c->fc_denorm_ftz[1] = fc.shaderDenormFlushToZeroFloat32;
	c->fc_denorm_ftz[2] = fc.shaderDenormFlushToZeroFloat64;
	c->fc_szinp[0] = fc.shaderSignedZeroInfNanPreserveFloat16;
	c->fc_szinp[1] = fc.shaderSignedZeroInfNanPreserveFloat32;
	c->fc_szinp[2] = fc.shaderSignedZeroInfNanPreserveFloat64;
	c->fc_rte[0] = fc.shaderRoundingModeRTEFloat16;
	c->fc_rte[1] = fc.shaderRoundingModeRTEFloat32;
	c->fc_rte[2] = fc.shaderRoundingModeRTEFloat64;
}

static void copy_features(const vkx_features *f, vkx_caps *c) {
	c->f_float64 = f->f2.features.shaderFloat64;
	c->f_int64 = f->f2.features.shaderInt64;
	c->f_int16 = f->f2.features.shaderInt16;
	c->f_float16 = f->f16i8.shaderFloat16;
	c->f_int8 = f->f16i8.shaderInt8;
	c->f_sb16 = f->s16.storageBuffer16BitAccess;
	c->f_ubo16 = f->s16.uniformAndStorageBuffer16BitAccess;
	c->f_push16 = f->s16.storagePushConstant16;
	c->f_sb8 = f->s8.storageBuffer8BitAccess;
	c->f_ubo8 = f->s8.uniformAndStorageBuffer8BitAccess;
	c->f_push8 = f->s8.storagePushConstant8;
	c->f_atomic_float32_add = f->af.shaderBufferFloat32AtomicAdd;
	c->f_atomic_float64_add = f->af.shaderBufferFloat64AtomicAdd;
	c->f_subgroup_size_control = f->ssc.subgroupSizeControl;
	c->f_full_subgroups = f->ssc.computeFullSubgroups;
	c->f_memory_model = f->mm.vulkanMemoryModel;
	c->f_buffer_device_address = f->bda.bufferDeviceAddress;
}

VkFormat vkx_texel_format(uint32_t f) {
	switch (f) {
	case VKX_TEXEL_RGBA32U:
		return VK_FORMAT_R32G32B32A32_UINT;
	case VKX_TEXEL_RGBA16U:
		return VK_FORMAT_R16G16B16A16_UINT;
	case VKX_TEXEL_R32U:
		return VK_FORMAT_R32_UINT;
	case VKX_TEXEL_R16U:
		return VK_FORMAT_R16_UINT;
	}
	return VK_FORMAT_UNDEFINED;
}

// query_texel_formats sets bit f of c->texel_formats for each format a uniform texel
// buffer can be read with.
static void query_texel_formats(vkx_instance *in, VkPhysicalDevice p, vkx_caps *c) {
	for (uint32_t f = 1; f < VKX_TEXEL_END; f++) {
		VkFormatProperties fp;
		in->vkGetPhysicalDeviceFormatProperties(p, vkx_texel_format(f), &fp);
		if (fp.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT)
			c->texel_formats |= 1u << f;
	}
}

void vkx_query_caps(vkx_instance *in, uint32_t index, vkx_caps *c) {
	memset(c, 0, sizeof *c);
	VkPhysicalDevice p = in->phys[index];
	vkx_features f;
	query_features(in, p, &f);
	query_properties(in, p, &f, c);
	copy_features(&f, c);
	query_texel_formats(in, p, c);
	VkPhysicalDeviceMemoryProperties mp;
	in->vkGetPhysicalDeviceMemoryProperties(p, &mp);
	c->heap_count = mp.memoryHeapCount < VKX_MAX_HEAPS ? mp.memoryHeapCount : VKX_MAX_HEAPS;
	for (uint32_t i = 0; i < c->heap_count; i++) {
		c->heap_size[i] = mp.memoryHeaps[i].size;
		c->heap_flags[i] = mp.memoryHeaps[i].flags;
	}
	c->type_count = mp.memoryTypeCount;
	for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
		c->type_flags[i] = mp.memoryTypes[i].propertyFlags;
		c->type_heap[i] = mp.memoryTypes[i].heapIndex;
	}
}

// ---- device ----

// enable_only keeps the features vkxla uses: robustBufferAccess and the like cost
// speed on some drivers, so the core feature set is not enabled wholesale.
static void enable_only(vkx_features *f) {
	VkPhysicalDeviceFeatures all = f->f2.features;
	memset(&f->f2.features, 0, sizeof f->f2.features);
	f->f2.features.shaderFloat64 = all.shaderFloat64;
	f->f2.features.shaderInt64 = all.shaderInt64;
	f->f2.features.shaderInt16 = all.shaderInt16;
	VkPhysicalDeviceShaderAtomicFloatFeaturesEXT af = f->af;
	void *next = f->af.pNext;
	memset(&f->af, 0, sizeof f->af);
	f->af.sType = af.sType;
	f->af.pNext = next;
	f->af.shaderBufferFloat32Atomics = af.shaderBufferFloat32Atomics;
	f->af.shaderBufferFloat32AtomicAdd = af.shaderBufferFloat32AtomicAdd;
	f->af.shaderBufferFloat64Atomics = af.shaderBufferFloat64Atomics;
	f->af.shaderBufferFloat64AtomicAdd = af.shaderBufferFloat64AtomicAdd;
	f->af.shaderSharedFloat32Atomics = af.shaderSharedFloat32Atomics;
	f->af.shaderSharedFloat32AtomicAdd = af.shaderSharedFloat32AtomicAdd;
	f->af.shaderSharedFloat64Atomics = af.shaderSharedFloat64Atomics;
	f->af.shaderSharedFloat64AtomicAdd = af.shaderSharedFloat64AtomicAdd;
	// Only bufferDeviceAddress itself: capture/replay and multi-device are unused.
	f->bda.bufferDeviceAddressCaptureReplay = VK_FALSE;
	f->bda.bufferDeviceAddressMultiDevice = VK_FALSE;
}

static void load_device_funcs(vkx_instance *in, vkx_device *d) {
#define LOAD(name) d->name = (PFN_##name)in->vkGetDeviceProcAddr(d->dev, #name);
	VKX_DEVICE_FUNCS(LOAD)
#undef LOAD
}

vkx_err vkx_device_create(vkx_instance *in, uint32_t index, vkx_device **out) {
	*out = NULL;
	VkPhysicalDevice p = in->phys[index];
	uint32_t ts;
	uint32_t family = queue_family(in, p, &ts);
	if (family == UINT32_MAX)
		return FAIL(VK_ERROR_FEATURE_NOT_PRESENT, "vkGetPhysicalDeviceQueueFamilyProperties(compute)");
	vkx_features f;
	query_features(in, p, &f);
	enable_only(&f);

	float prio = 1.0f;
	VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
	q.queueFamilyIndex = family;
	q.queueCount = 1;
	q.pQueuePriorities = &prio;
	VkDeviceCreateInfo ci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
	ci.pNext = &f.f2;
	ci.queueCreateInfoCount = 1;
	ci.pQueueCreateInfos = &q;
	ci.enabledExtensionCount = f.next;
	ci.ppEnabledExtensionNames = f.exts;

	vkx_device *d = calloc(1, sizeof *d);
	if (!d)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	VkResult r = in->vkCreateDevice(p, &ci, NULL, &d->dev);
	if (r != VK_SUCCESS) {
		free(d);
		return FAIL(r, "vkCreateDevice");
	}
	load_device_funcs(in, d);
	if (f.has_bda && f.bda.bufferDeviceAddress) {
		d->get_address = (PFN_vkGetBufferDeviceAddress)in->vkGetDeviceProcAddr(d->dev, "vkGetBufferDeviceAddress");
		if (!d->get_address)
			d->get_address = (PFN_vkGetBufferDeviceAddress)in->vkGetDeviceProcAddr(d->dev, "vkGetBufferDeviceAddressKHR");
	}
	d->vkGetDeviceQueue(d->dev, family, 0, &d->queue);
	VkPipelineCacheCreateInfo pc = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
	r = d->vkCreatePipelineCache(d->dev, &pc, NULL, &d->cache);
	if (r != VK_SUCCESS) {
		d->vkDestroyDevice(d->dev, NULL);
		free(d);
		return FAIL(r, "vkCreatePipelineCache");
	}
	*out = d;
	return OK;
}

void vkx_device_destroy(vkx_device *d) {
	if (!d)
		return;
	d->vkDestroyPipelineCache(d->dev, d->cache, NULL);
	d->vkDestroyDevice(d->dev, NULL);
	free(d);
}

vkx_err vkx_device_wait_idle(vkx_device *d) {
	CHECK(d->vkDeviceWaitIdle(d->dev), "vkDeviceWaitIdle");
	return OK;
}

// ---- buffers ----

static vkx_err bind_memory(vkx_device *d, vkx_buffer *b, const uint32_t *types, uint32_t ntypes,
			   uint32_t mappable, void **mapped, uint32_t *type) {
	VkMemoryRequirements req;
	d->vkGetBufferMemoryRequirements(d->dev, b->buf, &req);
	uint32_t t = UINT32_MAX;
	for (uint32_t i = 0; i < ntypes && t == UINT32_MAX; i++)
		if (req.memoryTypeBits & (1u << types[i]))
			t = types[i];
	if (t == UINT32_MAX)
		return FAIL(VK_ERROR_FEATURE_NOT_PRESENT, "vkGetBufferMemoryRequirements(no memory type)");
	VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
	VkMemoryAllocateFlagsInfo flags = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
	flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
	if (d->get_address)
		ai.pNext = &flags;
	ai.allocationSize = req.size;
	ai.memoryTypeIndex = t;
	CHECK(d->vkAllocateMemory(d->dev, &ai, NULL, &b->mem), "vkAllocateMemory");
	CHECK(d->vkBindBufferMemory(d->dev, b->buf, b->mem, 0), "vkBindBufferMemory");
	if (mappable & (1u << t))
		CHECK(d->vkMapMemory(d->dev, b->mem, 0, VK_WHOLE_SIZE, 0, mapped), "vkMapMemory");
	*type = t;
	return OK;
}

vkx_err vkx_buffer_create(vkx_device *d, uint64_t size, const uint32_t *types, uint32_t ntypes,
			  uint32_t mappable, vkx_buffer **out, void **mapped, uint32_t *type) {
	*out = NULL;
	*mapped = NULL;
	vkx_buffer *b = calloc(1, sizeof *b);
	if (!b)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	VkBufferCreateInfo ci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
	ci.size = size;
	ci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
		   VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
	if (d->get_address)
		ci.usage |= VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
	ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
	VkResult r = d->vkCreateBuffer(d->dev, &ci, NULL, &b->buf);
	if (r != VK_SUCCESS) {
		free(b);
		return FAIL(r, "vkCreateBuffer");
	}
	vkx_err e = bind_memory(d, b, types, ntypes, mappable, mapped, type);
	if (e.res != VK_SUCCESS) {
		vkx_buffer_destroy(d, b);
		*mapped = NULL;
		return e;
	}
	*out = b;
	return OK;
}

uint64_t vkx_buffer_address(vkx_device *d, vkx_buffer *b) {
	if (!d->get_address)
		return 0;
	VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
	ai.buffer = b->buf;
	return d->get_address(d->dev, &ai);
}

int vkx_device_addresses(vkx_device *d) { return d->get_address != NULL; }

void vkx_buffer_destroy(vkx_device *d, vkx_buffer *b) {
	if (!b)
		return;
	d->vkDestroyBuffer(d->dev, b->buf, NULL);
	// Freeing memory unmaps it implicitly.
	if (b->mem)
		d->vkFreeMemory(d->dev, b->mem, NULL);
	free(b);
}

// ---- kernels ----

static uint32_t descriptors(const vkx_kernel *k) { return k->bindings + k->texels; }

static vkx_err create_set_layout(vkx_device *d, vkx_kernel *k) {
	uint32_t n = descriptors(k);
	VkDescriptorSetLayoutBinding *binds = calloc(n, sizeof *binds);
	if (!binds)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	for (uint32_t i = 0; i < n; i++) {
		binds[i].binding = i;
		binds[i].descriptorType =
			i < k->bindings ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
		binds[i].descriptorCount = 1;
		binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
	}
	VkDescriptorSetLayoutCreateInfo dl = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
	dl.bindingCount = n;
	dl.pBindings = binds;
	VkResult r = d->vkCreateDescriptorSetLayout(d->dev, &dl, NULL, &k->dsl);
	free(binds);
	return r == VK_SUCCESS ? OK : FAIL(r, "vkCreateDescriptorSetLayout");
}

static vkx_err create_layouts(vkx_device *d, vkx_kernel *k) {
	if (descriptors(k)) {
		vkx_err e = create_set_layout(d, k);
		if (e.res != VK_SUCCESS)
			return e;
	}
	VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, k->push};
	VkPipelineLayoutCreateInfo pl = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
	pl.setLayoutCount = descriptors(k) ? 1 : 0;
	pl.pSetLayouts = &k->dsl;
	pl.pushConstantRangeCount = k->push ? 1 : 0;
	pl.pPushConstantRanges = &push;
	CHECK(d->vkCreatePipelineLayout(d->dev, &pl, NULL, &k->layout), "vkCreatePipelineLayout");
	return OK;
}

static vkx_err create_pipeline(vkx_device *d, vkx_kernel *k, VkShaderModule mod, const char *entry,
			       const uint32_t *spec, uint32_t nspec) {
	VkSpecializationMapEntry *entries = calloc(nspec ? nspec : 1, sizeof *entries);
	if (!entries)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	for (uint32_t i = 0; i < nspec; i++)
		entries[i] = (VkSpecializationMapEntry){i, i * 4, 4};
	VkSpecializationInfo si = {nspec, entries, nspec * 4, spec};
	VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
	ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
	ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
	ci.stage.module = mod;
	ci.stage.pName = entry;
	ci.stage.pSpecializationInfo = nspec ? &si : NULL;
	ci.layout = k->layout;
	VkResult r = d->vkCreateComputePipelines(d->dev, d->cache, 1, &ci, NULL, &k->pipe);
	free(entries);
	return r == VK_SUCCESS ? OK : FAIL(r, "vkCreateComputePipelines");
}

vkx_err vkx_kernel_create(vkx_device *d, const uint32_t *code, size_t size, const char *entry,
			  uint32_t bindings, const uint32_t *texels, uint32_t ntexels, uint32_t push_size,
			  const uint32_t *spec, uint32_t nspec, vkx_kernel **out) {
	*out = NULL;
	vkx_kernel *k = calloc(1, sizeof *k);
	if (!k)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	k->formats = calloc(ntexels ? ntexels : 1, sizeof *k->formats);
	if (!k->formats) {
		free(k);
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	}
	for (uint32_t i = 0; i < ntexels; i++)
		k->formats[i] = vkx_texel_format(texels[i]);
	k->bindings = bindings;
	k->texels = ntexels;
	k->push = push_size;
	VkShaderModuleCreateInfo mi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
	mi.codeSize = size;
	mi.pCode = code;
	VkShaderModule mod = VK_NULL_HANDLE;
	VkResult r = d->vkCreateShaderModule(d->dev, &mi, NULL, &mod);
	vkx_err e = r == VK_SUCCESS ? OK : FAIL(r, "vkCreateShaderModule");
	if (e.res == VK_SUCCESS)
		e = create_layouts(d, k);
	if (e.res == VK_SUCCESS)
		e = create_pipeline(d, k, mod, entry, spec, nspec);
	// The pipeline keeps what it needs; the module is not needed after creation.
	if (mod)
		d->vkDestroyShaderModule(d->dev, mod, NULL);
	if (e.res != VK_SUCCESS) {
		vkx_kernel_destroy(d, k);
		return e;
	}
	*out = k;
	return OK;
}

void vkx_kernel_destroy(vkx_device *d, vkx_kernel *k) {
	if (!k)
		return;
	if (k->pipe)
		d->vkDestroyPipeline(d->dev, k->pipe, NULL);
	if (k->layout)
		d->vkDestroyPipelineLayout(d->dev, k->layout, NULL);
	if (k->dsl)
		d->vkDestroyDescriptorSetLayout(d->dev, k->dsl, NULL);
	free(k->formats);
	free(k);
}

// ---- command buffers ----

vkx_err vkx_cmd_create(vkx_device *d, vkx_cmd **out) {
	*out = NULL;
	vkx_cmd *c = calloc(1, sizeof *c);
	if (!c)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	// One pool per command buffer: a pool must be externally synchronised while any of
	// its command buffers records, so sharing one would serialise all recording.
	VkCommandPoolCreateInfo pi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
	VkResult r = VK_SUCCESS;
	const char *call = "vkCreateCommandPool";
	r = d->vkCreateCommandPool(d->dev, &pi, NULL, &c->pool);
	if (r == VK_SUCCESS) {
		call = "vkAllocateCommandBuffers";
		VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
		ai.commandPool = c->pool;
		ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
		ai.commandBufferCount = 1;
		r = d->vkAllocateCommandBuffers(d->dev, &ai, &c->cb);
	}
	if (r == VK_SUCCESS) {
		call = "vkCreateFence";
		VkFenceCreateInfo fi = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
		r = d->vkCreateFence(d->dev, &fi, NULL, &c->fence);
	}
	if (r != VK_SUCCESS) {
		vkx_cmd_destroy(d, c);
		return FAIL(r, call);
	}
	*out = c;
	return OK;
}

// destroy_views destroys the views from index from on.
static void destroy_views(vkx_device *d, vkx_cmd *c, uint32_t from) {
	for (uint32_t i = from; i < c->nviews; i++)
		d->vkDestroyBufferView(d->dev, c->views[i], NULL);
	c->nviews = from;
}

void vkx_cmd_release_views(vkx_device *d, vkx_cmd *c) { destroy_views(d, c, 0); }

uint32_t vkx_cmd_view_count(vkx_cmd *c) { return c->nviews; }

void vkx_cmd_descriptor_room(vkx_cmd *c, uint64_t *storage, uint64_t *texels) {
	*storage = *texels = 0;
	for (uint32_t i = 0; i < c->ndpools; i++) {
		*storage += c->dpools[i].descs;
		*texels += c->dpools[i].texels;
	}
}

void vkx_cmd_destroy(vkx_device *d, vkx_cmd *c) {
	if (!c)
		return;
	destroy_views(d, c, 0);
	free(c->views);
	for (uint32_t i = 0; i < c->ndpools; i++)
		d->vkDestroyDescriptorPool(d->dev, c->dpools[i].pool, NULL);
	free(c->dpools);
	if (c->queries)
		d->vkDestroyQueryPool(d->dev, c->queries, NULL);
	if (c->fence)
		d->vkDestroyFence(d->dev, c->fence, NULL);
	// Destroying the pool frees its command buffer.
	if (c->pool)
		d->vkDestroyCommandPool(d->dev, c->pool, NULL);
	free(c);
}

vkx_err vkx_cmd_timestamps(vkx_device *d, vkx_cmd *c, uint32_t n) {
	if (c->queries)
		d->vkDestroyQueryPool(d->dev, c->queries, NULL);
	c->queries = VK_NULL_HANDLE;
	c->nqueries = 0;
	if (n == 0)
		return OK;
	VkQueryPoolCreateInfo qi = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
	qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
	qi.queryCount = n;
	CHECK(d->vkCreateQueryPool(d->dev, &qi, NULL, &c->queries), "vkCreateQueryPool");
	c->nqueries = n;
	return OK;
}

// full_barrier orders all earlier compute and transfer work (in this command buffer or
// in earlier submissions: a barrier's first scope covers everything submitted before
// it on the queue) before all later work, with their memory made visible.
static void full_barrier(vkx_device *d, vkx_cmd *c) {
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
			   VK_ACCESS_TRANSFER_WRITE_BIT;
	VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
	d->vkCmdPipelineBarrier(c->cb, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

// vkx_cmd_begin starts a new recording; the previous one's views were released
// (vkx_cmd_release_views).
vkx_err vkx_cmd_begin(vkx_device *d, vkx_cmd *c) {
	CHECK(d->vkResetCommandPool(d->dev, c->pool, 0), "vkResetCommandPool");
	for (uint32_t i = 0; i < c->ndpools; i++) {
		CHECK(d->vkResetDescriptorPool(d->dev, c->dpools[i].pool, 0), "vkResetDescriptorPool");
		c->dpools[i].sets_left = c->dpools[i].sets;
		c->dpools[i].descs_left = c->dpools[i].descs;
		c->dpools[i].texels_left = c->dpools[i].texels;
	}
	c->curdpool = 0;
	// Neither ONE_TIME_SUBMIT (it is replayed) nor SIMULTANEOUS_USE (Go serialises
	// submissions of one command buffer on its fence).
	VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
	CHECK(d->vkBeginCommandBuffer(c->cb, &bi), "vkBeginCommandBuffer");
	if (c->queries)
		d->vkCmdResetQueryPool(c->cb, c->queries, 0, c->nqueries);
	full_barrier(d, c);
	return OK;
}

// vkx_cmd_reset returns the command buffer to the initial state and frees its
// descriptor pools; its views were released (vkx_cmd_release_views).
vkx_err vkx_cmd_reset(vkx_device *d, vkx_cmd *c) {
	CHECK(d->vkResetCommandPool(d->dev, c->pool, VK_COMMAND_POOL_RESET_RELEASE_RESOURCES_BIT),
	      "vkResetCommandPool");
	for (uint32_t i = 0; i < c->ndpools; i++)
		d->vkDestroyDescriptorPool(d->dev, c->dpools[i].pool, NULL);
	c->ndpools = 0;
	c->curdpool = 0;
	return OK;
}

vkx_err vkx_cmd_end(vkx_device *d, vkx_cmd *c) {
	// A fence wait does not make device writes visible to the host; this barrier does,
	// so Buffer.Read of mapped memory after a submission sees the results.
	VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
	mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
	mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
	d->vkCmdPipelineBarrier(c->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
				VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	CHECK(d->vkEndCommandBuffer(c->cb), "vkEndCommandBuffer");
	return OK;
}

static vkx_err add_dpool(vkx_device *d, vkx_cmd *c, uint32_t descs, uint32_t texels) {
	if (c->ndpools == c->capdpools) {
		uint32_t cap = c->capdpools ? 2 * c->capdpools : 4;
		vkx_dpool *p = realloc(c->dpools, cap * sizeof *p);
		if (!p)
			return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "realloc");
		c->dpools = p;
		c->capdpools = cap;
	}
	vkx_dpool *p = &c->dpools[c->ndpools];
	p->sets = 64;
	p->descs = descs > 256 ? descs : 256;
	p->texels = texels > 256 ? texels : 256;
	VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, p->descs},
					 {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, p->texels}};
	VkDescriptorPoolCreateInfo ci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
	ci.maxSets = p->sets;
	ci.poolSizeCount = 2;
	ci.pPoolSizes = sizes;
	CHECK(d->vkCreateDescriptorPool(d->dev, &ci, NULL, &p->pool), "vkCreateDescriptorPool");
	p->sets_left = p->sets;
	p->descs_left = p->descs;
	p->texels_left = p->texels;
	c->ndpools++;
	return OK;
}

// alloc_set takes a set from the first pool with room, counting room itself so that
// allocation never fails for lack of it (which the validation layer would report).
static vkx_err alloc_set(vkx_device *d, vkx_cmd *c, vkx_kernel *k, VkDescriptorSet *set) {
	while (c->curdpool < c->ndpools &&
	       (c->dpools[c->curdpool].sets_left == 0 || c->dpools[c->curdpool].descs_left < k->bindings ||
		c->dpools[c->curdpool].texels_left < k->texels))
		c->curdpool++;
	if (c->curdpool == c->ndpools) {
		vkx_err e = add_dpool(d, c, k->bindings, k->texels);
		if (e.res != VK_SUCCESS)
			return e;
	}
	vkx_dpool *p = &c->dpools[c->curdpool];
	VkDescriptorSetAllocateInfo ai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
	ai.descriptorPool = p->pool;
	ai.descriptorSetCount = 1;
	ai.pSetLayouts = &k->dsl;
	CHECK(d->vkAllocateDescriptorSets(d->dev, &ai, set), "vkAllocateDescriptorSets");
	p->sets_left--;
	p->descs_left -= k->bindings;
	p->texels_left -= k->texels;
	return OK;
}

// create_views makes a view of each of the kernel's uniform texel buffer ranges,
// appended to the command buffer's views (which it owns from then on).
static vkx_err create_views(vkx_device *d, vkx_cmd *c, vkx_kernel *k, const vkx_range *ranges) {
	if (c->nviews + k->texels > c->capviews) {
		uint32_t cap = c->capviews ? 2 * c->capviews : 16;
		while (cap < c->nviews + k->texels)
			cap *= 2;
		VkBufferView *v = realloc(c->views, cap * sizeof *v);
		if (!v)
			return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "realloc");
		c->views = v;
		c->capviews = cap;
	}
	for (uint32_t i = 0; i < k->texels; i++) {
		VkBufferViewCreateInfo vi = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
		vi.buffer = ((vkx_buffer *)ranges[i].buf)->buf;
		vi.format = k->formats[i];
		vi.offset = ranges[i].offset;
		vi.range = ranges[i].size;
		CHECK(d->vkCreateBufferView(d->dev, &vi, NULL, &c->views[c->nviews]), "vkCreateBufferView");
		c->nviews++;
	}
	return OK;
}

// write_set writes the storage bindings from ranges and the uniform texel buffer
// bindings after them from views.
static vkx_err write_set(vkx_device *d, vkx_cmd *c, vkx_kernel *k, const vkx_range *ranges,
			 const VkBufferView *views, VkDescriptorSet *out) {
	VkDescriptorSet set;
	vkx_err e = alloc_set(d, c, k, &set);
	if (e.res != VK_SUCCESS)
		return e;
	VkDescriptorBufferInfo *infos = calloc(k->bindings ? k->bindings : 1, sizeof *infos);
	if (!infos)
		return FAIL(VK_ERROR_OUT_OF_HOST_MEMORY, "calloc");
	for (uint32_t i = 0; i < k->bindings; i++) {
		infos[i].buffer = ((vkx_buffer *)ranges[i].buf)->buf;
		infos[i].offset = ranges[i].offset;
		infos[i].range = ranges[i].size;
	}
	// One write per descriptor type, each spanning its consecutive bindings: those of
	// one type are updated in order.
	VkWriteDescriptorSet w[2];
	uint32_t nw = 0;
	if (k->bindings) {
		w[nw] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
		w[nw].dstSet = set;
		w[nw].descriptorCount = k->bindings;
		w[nw].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
		w[nw].pBufferInfo = infos;
		nw++;
	}
	if (k->texels) {
		w[nw] = (VkWriteDescriptorSet){VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
		w[nw].dstSet = set;
		w[nw].dstBinding = k->bindings;
		w[nw].descriptorCount = k->texels;
		w[nw].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
		w[nw].pTexelBufferView = views;
		nw++;
	}
	d->vkUpdateDescriptorSets(d->dev, nw, w, 0, NULL);
	free(infos);
	*out = set;
	return OK;
}

vkx_err vkx_cmd_dispatch(vkx_device *d, vkx_cmd *c, vkx_kernel *k, const vkx_range *ranges, uint32_t n,
			 const void *push, uint32_t push_size, uint32_t x, uint32_t y, uint32_t z) {
	if (n != descriptors(k) || push_size > k->push)
		return FAIL(VK_ERROR_VALIDATION_FAILED_EXT, "vkx_cmd_dispatch(arguments)");
	// The views and the descriptor set are made before anything is recorded, and a
	// failure destroys this dispatch's views, so it leaves the command buffer as it was.
	uint32_t first = c->nviews;
	vkx_err e = create_views(d, c, k, ranges + k->bindings);
	VkDescriptorSet set = VK_NULL_HANDLE;
	if (e.res == VK_SUCCESS && n)
		e = write_set(d, c, k, ranges, c->views + first, &set);
	if (e.res != VK_SUCCESS) {
		destroy_views(d, c, first);
		return e;
	}
	d->vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->pipe);
	if (set)
		d->vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, k->layout, 0, 1, &set, 0, NULL);
	if (push_size)
		d->vkCmdPushConstants(c->cb, k->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
	d->vkCmdDispatch(c->cb, x, y, z);
	return OK;
}

void vkx_cmd_barrier(vkx_device *d, vkx_cmd *c) { full_barrier(d, c); }

void vkx_cmd_copy(vkx_device *d, vkx_cmd *c, vkx_buffer *src, uint64_t src_off, vkx_buffer *dst,
		  uint64_t dst_off, uint64_t size) {
	VkBufferCopy region = {src_off, dst_off, size};
	d->vkCmdCopyBuffer(c->cb, src->buf, dst->buf, 1, &region);
}

void vkx_cmd_fill(vkx_device *d, vkx_cmd *c, vkx_buffer *b, uint64_t off, uint64_t size, uint32_t value) {
	d->vkCmdFillBuffer(c->cb, b->buf, off, size, value);
}

void vkx_cmd_timestamp(vkx_device *d, vkx_cmd *c, uint32_t index) {
	// BOTTOM_OF_PIPE: the timestamp is written when all earlier commands complete.
	d->vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->queries, index);
}

vkx_err vkx_cmd_read_timestamps(vkx_device *d, vkx_cmd *c, uint32_t n, uint64_t *out) {
	// Queries are read one at a time with their availability, without WAIT, so an
	// index the recording never wrote reads as zero instead of blocking forever.
	for (uint32_t i = 0; i < n && i < c->nqueries; i++) {
		uint64_t v[2] = {0, 0};
		VkResult r = d->vkGetQueryPoolResults(d->dev, c->queries, i, 1, sizeof v, v, sizeof v,
						      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
		if (r != VK_SUCCESS && r != VK_NOT_READY)
			return FAIL(r, "vkGetQueryPoolResults");
		out[i] = v[1] ? v[0] : 0;
	}
	return OK;
}

// ---- submission ----

vkx_err vkx_submit(vkx_device *d, vkx_cmd *c) {
	CHECK(d->vkResetFences(d->dev, 1, &c->fence), "vkResetFences");
	VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
	si.commandBufferCount = 1;
	si.pCommandBuffers = &c->cb;
	CHECK(d->vkQueueSubmit(d->queue, 1, &si, c->fence), "vkQueueSubmit");
	return OK;
}

// vkx_wait returns VK_SUCCESS once the command buffer's last submission completed, or
// VK_TIMEOUT.
vkx_err vkx_wait(vkx_device *d, vkx_cmd *c, uint64_t timeout_ns) {
	VkResult r = d->vkWaitForFences(d->dev, 1, &c->fence, VK_TRUE, timeout_ns);
	if (r == VK_TIMEOUT)
		return FAIL(r, "vkWaitForFences");
	CHECK(r, "vkWaitForFences");
	return OK;
}
