// The optimizer shim: spvtools::Optimizer behind a C function (see shim.h).
#include "shim.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <spirv-tools/optimizer.hpp>

namespace {

char* copy_string(const std::string& s) {
  char* c = static_cast<char*>(std::malloc(s.size() + 1));
  if (c != nullptr) std::memcpy(c, s.c_str(), s.size() + 1);
  return c;
}

}  // namespace

extern "C" int vkxla_optimize(spv_target_env env, spv_validator_options validator,
                              const uint32_t* words, size_t count,
                              uint32_t** out, size_t* out_count, char** error) {
  *out = nullptr;
  *out_count = 0;
  *error = nullptr;
  std::string messages;
  spvtools::Optimizer opt(env);
  opt.SetMessageConsumer([&messages](spv_message_level_t level, const char*,
                                     const spv_position_t& pos, const char* msg) {
    if (level > SPV_MSG_ERROR) return;  // warnings and info are not failures
    if (!messages.empty()) messages += "\n";
    std::string m(msg);
    while (!m.empty() && std::isspace(static_cast<unsigned char>(m.back()))) m.pop_back();
    messages += m;
    if (pos.index != 0) messages += " (word " + std::to_string(pos.index) + ")";
  });
  opt.RegisterPerformancePasses();

  // Keep the kernel's interface as emitted: the runtime binds descriptors and
  // specialization constants by the numbers the emitter chose.
  spv_optimizer_options options = spvOptimizerOptionsCreate();
  spvOptimizerOptionsSetRunValidator(options, true);
  spvOptimizerOptionsSetValidatorOptions(options, validator);
  spvOptimizerOptionsSetPreserveBindings(options, true);
  spvOptimizerOptionsSetPreserveSpecConstants(options, true);

  std::vector<uint32_t> result;
  bool ok = false;
  try {
    ok = opt.Run(words, count, &result, options);
  } catch (const std::exception& e) {
    messages += std::string("exception: ") + e.what();
  }
  spvOptimizerOptionsDestroy(options);
  if (!ok) {
    *error = copy_string(messages.empty() ? "optimizer failed" : messages);
    return 0;
  }
  *out = static_cast<uint32_t*>(std::malloc(result.size() * sizeof(uint32_t)));
  if (*out == nullptr) {
    *error = copy_string("out of memory");
    return 0;
  }
  std::memcpy(*out, result.data(), result.size() * sizeof(uint32_t));
  *out_count = result.size();
  return 1;
}
