#include "observation_flags.hpp"

namespace strom::cli {

command_spec with_observation_options(command_spec spec) {
  spec.options.push_back({"metrics-listen", "HOST:PORT",
                          "serve Prometheus metrics at http://HOST:PORT/metrics (port 0: a "
                          "free port, named in the log)"});
  return spec;
}

result<runtime::observation_options> read_observation_flags(const arguments& args) {
  runtime::observation_options options;
  if (args.has("metrics-listen")) {
    auto where = args.get_endpoint("metrics-listen");
    if (!where)
      return where.err();
    options.metrics_listen = *where;
  }
  return options;
}

} // namespace strom::cli
