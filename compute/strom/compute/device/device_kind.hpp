#pragma once
// Which backend a replica runs on (--device, training.device) and whether this build and
// this machine can run the CUDA one.

#include <string>

namespace strom::compute {

/// The backend a replica's step runs on.
enum class device_kind { cpu, cuda };

/// Whether CUDA training can run here: `why` says what is missing when it cannot (a build
/// without the CUDA backend, no driver, no GPU) and names the GPU when it can.
struct cuda_presence {
  bool usable = false;
  std::string why;
};
/// Asks the CUDA runtime once per call; cheap enough for start-up and test preconditions.
cuda_presence find_cuda();

} // namespace strom::compute
