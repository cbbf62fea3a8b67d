#include "scheduler_link.hpp"

#include <fmt/format.h>

#include "strom/runtime/node_daemon.hpp"

namespace strom::cli {

std::unique_ptr<scheduler_link> connect_scheduler(const runtime::endpoint& to,
                                                  const char* command,
                                                  const std::string& context) {
  auto link = std::make_unique<scheduler_link>();
  auto scheduler = runtime::connect_to_scheduler(link->system, to);
  if (!scheduler) {
    if (context.empty())
      fmt::print(stderr, "{}: {}\n", command, scheduler.err().message);
    else
      fmt::print(stderr, "{}: {}: {}\n", command, context, scheduler.err().message);
    return nullptr;
  }
  link->scheduler = std::move(*scheduler);
  return link;
}

} // namespace strom::cli
