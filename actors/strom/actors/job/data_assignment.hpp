#pragma once
// Which samples each worker trains in a round, as pure functions of the job's live workers (no
// CAF, no clock), so the job_master's data assignment can be checked exhaustively. A round is
// either an epoch's pass (each worker one partition of the training set, in that epoch's
// order) or a makeup pass over samples a round left untrained (split the same way, as explicit
// lists). A worker's frames count its batches exactly (every step sends one frame, empty when
// nothing passed the threshold), so the frames a relay passed on say which samples a round
// trained and which it did not.

#include <cstdint>
#include <map>
#include <vector>

#include "strom/actors/messages.hpp"

namespace strom::actors {

/// How the job's training set is split: every node reports the same (node_ready).
struct data_plan {
  std::uint64_t train_samples = 0;
  std::uint32_t batch_size = 1;
  std::uint64_t seed = 0;
  bool shuffle = true;
};

/// A node's trainers, in rank order.
struct node_workers {
  std::uint64_t node = 0;
  std::uint32_t workers = 1;
};

/// The work of every worker in round `round`, by node: the partitions of `epoch` when
/// `makeup` is null, else `*makeup` split into contiguous lists. Every round waits for the
/// frames of all `nodes`.
std::map<std::uint64_t, std::vector<round_work>> plan_round(
  const std::vector<node_workers>& nodes, std::uint32_t round, std::uint32_t epoch,
  const data_plan& data, const std::vector<std::uint32_t>* makeup);

/// The samples a worker's `work` visits, in order.
std::vector<std::uint32_t> samples_of(const round_work& work, const data_plan& data);

/// Batches in all of `work`.
std::uint64_t batches_of(const std::vector<round_work>& work, const data_plan& data);

/// What a node's workers trained of their `work` after `frames[w]` steps of worker w, and the
/// samples they left, in order.
struct round_remainder {
  std::uint64_t trained_samples = 0;
  std::uint64_t trained_batches = 0;
  std::vector<std::uint32_t> untrained;
};

/// The remainder of `work` after the steps in `frames` (a missing entry counts as 0 steps).
round_remainder remainder_of(const std::vector<round_work>& work,
                             const std::vector<std::uint64_t>& frames, const data_plan& data);

} // namespace strom::actors
