// find_cuda and make_cuda_engine: through the CUDA backend module, loaded on first use.
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "strom/compute/device/cuda_module_entry.hpp"
#include "strom/compute/model.hpp"

namespace strom::compute {

namespace {

constexpr const char* module_name = "libstrom_cuda.so";

struct cuda_module {
  std::string missing;  ///< why it could not be loaded; empty once loaded
  decltype(&strom_cuda_presence) presence = nullptr;
  decltype(&strom_cuda_make_engine) make_engine = nullptr;
};

/// Where the module may be: the loader's own search (LD_LIBRARY_PATH, a bundle), then the
/// build tree and the install prefix this strom was built for.
cuda_module load() {
  cuda_module m;
  std::string last_error;
  for (const char* path : {module_name, STROM_CUDA_MODULE_BUILT, STROM_CUDA_MODULE_INSTALLED}) {
    if (*path == '\0')
      continue;
    // Local: nothing else in the process resolves a symbol to CUDA's or cuBLAS's.
    if (void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
      m.presence = reinterpret_cast<decltype(m.presence)>(dlsym(handle, "strom_cuda_presence"));
      m.make_engine =
        reinterpret_cast<decltype(m.make_engine)>(dlsym(handle, "strom_cuda_make_engine"));
      if (m.presence == nullptr || m.make_engine == nullptr)
        m.missing = fmt::format("{} lacks strom's entry points", path);
      return m;  // loaded for the process's life
    }
    last_error = dlerror();
  }
  m.missing = fmt::format("this strom has no CUDA backend (it is built with -DSTROM_CUDA=ON "
                          "where nvcc is found; {})",
                          last_error);
  return m;
}

const cuda_module& module() {
  static const cuda_module loaded = load();
  return loaded;
}

} // namespace

cuda_presence find_cuda() {
  const auto& m = module();
  if (!m.missing.empty())
    return {false, m.missing};
  cuda_presence presence;
  m.presence(&presence);
  return presence;
}

std::unique_ptr<device_engine> make_cuda_engine(const model& net, const updater& rule, float l2,
                                                std::uint64_t seed) {
  const auto& m = module();
  if (!m.missing.empty())
    throw std::runtime_error(m.missing);
  if (net.max_batch() == 0)
    throw std::invalid_argument("cuda engine: the model has reserved no batch yet");
  const auto spec = engine_spec_of(net, rule, l2, seed);
  std::string error;
  std::unique_ptr<device_engine> engine{m.make_engine(&spec, &error)};
  if (!engine)
    throw std::runtime_error(error);
  return engine;
}

} // namespace strom::compute
