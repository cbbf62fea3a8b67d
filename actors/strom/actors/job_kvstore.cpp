// The job_master's part in a kvstore job (mode kvstore): before the workers are assigned the
// job, each server node spawns the parameter_shards of its key ranges; every round tells the
// shards its workers; a lost worker node is forgotten by the shards; at the end the shards'
// counts go into the report and the server nodes drop them. A lost server node fails the job
// (chain replication, which would let it go on, is not built yet).

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "strom/actors/error_text.hpp"
#include "strom/actors/job_master_steps.hpp"
#include "strom/log.hpp"

namespace strom::actors::job_steps {

namespace {

/// Every shard has answered: the workers get the job with the shards' handles.
void shards_served(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  std::sort(st.shards.begin(), st.shards.end(),
            [](const kv_shard_entry& a, const kv_shard_entry& b) { return a.offset < b.offset; });
  log::info("job_master: job {} holds its parameters in {} key ranges on {} servers",
            st.status.job_id, st.shards.size(), setup.servers.size());
  assign(self, setup);
}

} // namespace

bool is_server(const job_master_setup& setup, std::uint64_t node_id) {
  return std::any_of(setup.servers.begin(), setup.servers.end(),
                     [&](const job_node& server) { return server.status.node_id == node_id; });
}

void serve_then_assign(self_ptr self, const job_master_setup& setup) {
  auto& st = self->state;
  if (setup.servers.empty())
    return assign(self, setup);
  st.report.servers = static_cast<std::uint32_t>(setup.servers.size());
  st.report.replicas = 1;
  const auto job_id = st.status.job_id;
  auto left = std::make_shared<std::size_t>(setup.servers.size());
  for (std::uint32_t s = 0; s < setup.servers.size(); ++s) {
    const auto& server = setup.servers[s];
    const auto node_id = server.status.node_id;
    shard_assignment work{job_id, setup.submission.job_text, setup.submission.source, s,
                          static_cast<std::uint32_t>(setup.servers.size())};
    request_while_alive(self, st.awaiting, node_id, server.agent, setup.timeouts.prepare_timeout,
                        std::move(work))
      .then(
        [self, setup, left](const shards_ready& ready) {
          auto& st = self->state;
          if (st.outcome)
            return;
          st.shards.insert(st.shards.end(), ready.shards.begin(), ready.shards.end());
          if (!ready.endpoint.empty())
            st.server_endpoints.push_back(ready.endpoint);
          if (--*left == 0)
            shards_served(self, setup);
        },
        [self, setup, node_id](caf::error& err) {
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::bad_job),
                              fmt::format("server node {} did not take its key ranges: {}",
                                          node_id, error_text(self->system(), err))));
        });
  }
}

void plan_shards_round(self_ptr self) {
  auto& st = self->state;
  if (st.shards.empty())
    return;
  kv_round plan{st.round, st.status.epoch, {}};
  for (const auto& [node_id, work] : st.work)
    for (std::uint32_t slot = 0; slot < work.size(); ++slot)
      plan.workers.push_back(kv_worker_id(node_id, slot));
  for (const auto& entry : st.shards)
    self->send(entry.shard, plan);
}

void forget_on_shards(self_ptr self, std::uint64_t node_id) {
  for (const auto& entry : self->state.shards)
    self->send(entry.shard, forget_atom_v, node_id);
}

void lose_server(self_ptr self, const job_master_setup& setup, const member_lost& lost) {
  fail_job(self, setup,
           make_error(strom_error::node_lost,
                      fmt::format("parameter server node {} was lost ({}); its key ranges "
                                  "have no replica (--replicas is not built yet)",
                                  lost.node_id, error_text(self->system(), lost.reason))));
}

void count_shards_then(self_ptr self, const job_master_setup& setup,
                       std::function<void()> next) {
  auto& st = self->state;
  if (st.shards.empty())
    return next();
  auto left = std::make_shared<std::size_t>(st.shards.size());
  auto then = std::make_shared<std::function<void()>>(std::move(next));
  for (const auto& entry : st.shards)
    self->request(entry.shard, setup.timeouts.answer_timeout, stats_atom_v)
      .then(
        [self, left, then](const shard_stats& counted) {
          self->state.report.server_updates += counted.updates;
          if (--*left == 0)
            (*then)();
        },
        [self, setup](caf::error& err) {
          fail_job(self, setup,
                   make_error(code_for(err, strom_error::node_failed),
                              "a parameter shard did not report: "
                                + error_text(self->system(), err)));
        });
}

} // namespace strom::actors::job_steps
