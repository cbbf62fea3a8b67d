#include "strom/runtime/sim/sim_trace.hpp"

#include <openssl/evp.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace strom::runtime::sim {

struct sim_trace::hasher {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  hasher() {
    if (context == nullptr || EVP_DigestInit_ex(context, EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("sim trace: OpenSSL cannot start a SHA-256");
  }
  ~hasher() { EVP_MD_CTX_free(context); }
  hasher(const hasher&) = delete;
  hasher& operator=(const hasher&) = delete;
};

sim_trace::sim_trace() : hash_(std::make_unique<hasher>()) {}

sim_trace::~sim_trace() {
  if (file_ != nullptr)
    std::fclose(file_);
}

result<std::unique_ptr<sim_trace>> sim_trace::to_file(const std::string& path) {
  auto trace = std::make_unique<sim_trace>();
  trace->file_ = std::fopen(path.c_str(), "w");
  if (trace->file_ == nullptr)
    return error{fmt::format("{}: cannot write the trace: {}", path, std::strerror(errno))};
  trace->path_ = path;
  return trace;
}

void sim_trace::add(std::string_view line) {
  ++lines_;
  EVP_DigestUpdate(hash_->context, line.data(), line.size());
  EVP_DigestUpdate(hash_->context, "\n", 1);
  if (file_ != nullptr && !write_failed_)
    write_failed_ = std::fwrite(line.data(), 1, line.size(), file_) != line.size()
                    || std::fputc('\n', file_) == EOF;
}

result<std::string> sim_trace::finish() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_DigestFinal_ex(hash_->context, digest, &size);
  std::string hex;
  for (unsigned i = 0; i < size; ++i)
    hex += fmt::format("{:02x}", digest[i]);
  if (file_ != nullptr) {
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (write_failed_ || !closed)
      return error{fmt::format("{}: cannot write the trace: {}", path_, std::strerror(errno))};
  }
  return hex;
}

} // namespace strom::runtime::sim
