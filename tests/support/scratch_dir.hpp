#pragma once
// A temporary folder for a test: unique to the process and instance, removed with its content.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace strom::test {

/// A temporary folder unique to this process and instance, removed with its content.
class scratch {
public:
  scratch() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path()
            / ("strom-test-" + std::to_string(::getpid()) + "-"
               + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~scratch() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

  std::filesystem::path write(const std::string& name, const std::string& text) const {
    auto file = path_ / name;
    std::ofstream{file} << text;
    return file;
  }

private:
  std::filesystem::path path_;
};

} // namespace strom::test
