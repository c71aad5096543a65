// C interface of the optimizer shim: SPIRV-Tools 2023.1 exposes its
// optimizer only as C++ (spvtools::Optimizer), and cgo calls only C.
#ifndef VKXLA_SPIRV_SHIM_H
#define VKXLA_SPIRV_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <spirv-tools/libspirv.h>

#ifdef __cplusplus
extern "C" {
#endif

// vkxla_optimize runs the performance passes over words[0:count]. On success
// it returns 1 and sets *out/*out_count to a malloc'ed binary; on failure it
// returns 0 and sets *error to a malloc'ed message. The caller frees both.
int vkxla_optimize(spv_target_env env, spv_validator_options validator,
                   const uint32_t* words, size_t count,
                   uint32_t** out, size_t* out_count, char** error);

#ifdef __cplusplus
}
#endif

#endif
