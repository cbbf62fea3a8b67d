#include <fmt/format.h>

#include "options/arguments.hpp"
#include "commands.hpp"
#include "scheduler_link.hpp"
#include "options/tls_flags.hpp"
#include "strom/compute/memory_estimate.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/stop_signals.hpp"

namespace strom::cli {

namespace {

const command_spec status_spec{
  "strom status --to HOST:PORT [options]",
  "Prints the nodes that joined the scheduler at HOST:PORT and its jobs.",
  with_tls_options({
    {"to", "HOST:PORT", "the scheduler"},
    connect_timeout_option(),
  }),
  0,
};

void print_status(const std::string& where, const actors::cluster_status& status) {
  fmt::print("scheduler {}: {} node{}, {} job{}, membership epoch {}\n", where,
             status.nodes.size(), status.nodes.size() == 1 ? "" : "s", status.jobs.size(),
             status.jobs.size() == 1 ? "" : "s", status.membership_epoch);
  if (!status.nodes.empty())
    fmt::print("nodes:\n  {:>4}  {:<24} {:<16} {:>5} {:>7} {:>11} {:>12}\n", "id", "name",
               "address", "cores", "workers", "incarnation", "memory limit");
  for (const auto& node : status.nodes)
    fmt::print("  {:>4}  {:<24} {:<16} {:>5} {:>7} {:>11} {:>12}\n", node.node_id, node.name,
               node.address, node.cores, node.workers, node.incarnation,
               node.memory_limit == 0 ? std::string{"-"} : compute::bytes_text(node.memory_limit));
  if (!status.jobs.empty())
    fmt::print("jobs:\n  {:>4}  {:<20} {:<10} {:>7} {:>9}  {}\n", "id", "name", "state", "epoch",
               "accuracy", "failure");
  for (const auto& job : status.jobs) {
    fmt::print("  {:>4}  {:<20} {:<10} {:>7} {:>9}  {}\n", job.job_id,
               job.name.empty() ? "-" : job.name, job.state,
               fmt::format("{}/{}", job.epoch, job.epochs),
               job.test_accuracy < 0 ? std::string{"-"}
                                     : fmt::format("{:.2f}%", 100.0 * job.test_accuracy),
               job.failure);
    if (job.nodes_lost + job.nodes_restored + job.nodes_joined > 0)
      fmt::print("        nodes: {} training, {} lost, {} restored, {} joined\n", job.nodes,
                 job.nodes_lost, job.nodes_restored, job.nodes_joined);
    if (!job.topology.empty())
      fmt::print("        relays: {}\n", job.topology);
    if (!job.stall.empty())
      fmt::print("        stalled: {}\n", job.stall);
  }
}

} // namespace

int run_status(int argc, char** argv) {
  runtime::stop_signals signals;
  auto parsed = parse_command(status_spec, "strom status", argc, argv);
  if (!parsed.args)
    return parsed.exit_status;
  auto& args = parsed.args;
  auto to = args->get_endpoint("to");
  if (!to) {
    fmt::print(stderr, "strom status: {}\n", to.err().message);
    return exit_usage;
  }
  const auto where = runtime::to_string(*to);
  auto link = connect_scheduler(*args, *to, "strom status", "");
  if (!link)
    return failure_status();
  auto status = runtime::query_status(link->system, link->scheduler);
  if (!status) {
    fmt::print(stderr, "strom status: scheduler {}: {}\n", where, status.err().message);
    return failure_status();
  }
  print_status(where, *status);
  return exit_ok;
}

} // namespace strom::cli
