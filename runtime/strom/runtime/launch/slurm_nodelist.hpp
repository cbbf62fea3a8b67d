#pragma once
// Slurm's compact host lists, as SLURM_NODELIST holds them: "node[01-03,07],gpu5" is node01,
// node02, node03, node07, gpu5. Ranges keep the zero padding of their first bound (Slurm's
// hostlist.c does the same); several bracket groups in one name multiply
// ("r[1-2]n[1-2]" is r1n1, r1n2, r2n1, r2n2).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strom/compute/result.hpp"

namespace strom::runtime::launch {

/// The host names of a compact Slurm node list, in order; errors quote the list and name the
/// problem.
result<std::vector<std::string>> expand_slurm_nodelist(std::string_view nodelist);

/// This task's place in a Slurm step (srun sets these variables on every task).
struct slurm_task {
  std::vector<std::string> nodes;  ///< SLURM_NODELIST (or SLURM_JOB_NODELIST), expanded
  std::uint32_t rank = 0;          ///< SLURM_PROCID: 0 runs the scheduler
  std::uint32_t tasks = 1;         ///< SLURM_NTASKS: how many nodes join
};

/// The task srun started this process as, or nullopt outside Slurm (no SLURM_PROCID or no
/// node list); errors name the variable and its value.
result<std::optional<slurm_task>> slurm_task_from_environment();

} // namespace strom::runtime::launch
