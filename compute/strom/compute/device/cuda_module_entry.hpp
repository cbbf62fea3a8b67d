#pragma once
// The CUDA backend module's entry points (libstrom_cuda.so, built with -DSTROM_CUDA=ON): C
// names so that the host finds them with dlsym, C++ types since both sides are built together.
// The module is loaded only when CUDA is first asked about (device/cuda_module.cpp): a program
// that trains on the CPU never maps CUDA's runtime, its thread-local storage or cuBLAS.

#include <string>

#include "strom/compute/device/device_engine.hpp"
#include "strom/compute/device/device_kind.hpp"
#include "strom/compute/device/engine_spec.hpp"

extern "C" {

/// Whether CUDA can run here, naming the GPU or saying why not (find_cuda).
void strom_cuda_presence(strom::compute::cuda_presence* out);
/// A new engine for `spec`, owned by the caller; null, with `error` saying why, where none can
/// be made (no GPU, a layer or updater without a device version).
strom::compute::device_engine* strom_cuda_make_engine(const strom::compute::engine_spec* spec,
                                                      std::string* error);

} // extern "C"
