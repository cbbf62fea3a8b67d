#pragma once
// The steps of the job_master's core, shared by the files that make it up and called by its
// parts (job_master.hpp says which): job_master.cpp (the job's life: assignment, epochs and
// rounds, evaluation, the end), job_metrics.cpp and job_membership.cpp (nodes lost and
// joining: remap, makeup round, restore, pause). Internal to the job_master.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/actors/errors.hpp"
#include "strom/actors/job/job_master.hpp"

namespace strom::actors::job_steps {

// -- job_master.cpp ---------------------------------------------------------------------------

double seconds_between(caf::actor_clock::time_point from, caf::actor_clock::time_point to);

bool in_job(const job_master_state& st, std::uint64_t node_id);

void report_status(self_ptr self, const job_master_setup& setup);

void fail_job(self_ptr self, const job_master_setup& setup, const caf::error& reason);

strom_error code_for(const caf::error& err, strom_error otherwise);

double seconds_of(caf::timespan span);

void start_round(self_ptr self, bool makeup);

void start_epoch(self_ptr self, const job_master_setup& setup);

void complete_when_counted(self_ptr self, const job_master_setup& setup);

void evaluate(self_ptr self, const job_master_setup& setup);

/// The epoch's training is done and `check` is its evaluation: record it, go on or finish.
void end_epoch(self_ptr self, const job_master_setup& setup, const epoch_check& check);

void end_round_when_done(self_ptr self, const job_master_setup& setup);

job_assignment assignment_for(const job_master_state& st, const job_master_setup& setup,
                              std::uint32_t rank, std::uint32_t workers,
                              std::uint32_t first_worker, std::uint32_t total_workers);

void begin_training(self_ptr self, const job_master_setup& setup);

/// Every node of the job is prepared: the job starts (the mesh wired, the checkpoint taken
/// when it resumes, then the first epoch); again without a node lost meanwhile.
void start_when_prepared(self_ptr self, const job_master_setup& setup);

/// Sends every node its assignment: rank, global worker ranks, the hub, the shards.
void assign(self_ptr self, const job_master_setup& setup);

// -- job_metrics.cpp --------------------------------------------------------------------------

/// Tells setup.metrics (if any) the job's figures: the epochs recorded, and the epoch under
/// way (its finished rounds and the current round's progress).
void publish_metrics(self_ptr self, const job_master_setup& setup);

// -- job_membership.cpp -----------------------------------------------------------------------

void drop_joiner(self_ptr self, const job_master_setup& setup, std::uint64_t node,
                 const std::string& why);

void lose_member(self_ptr self, const job_master_setup& setup, const member_lost& lost);

/// A node lost while the job prepares (loading data, wiring, taking the checkpoint): the job
/// starts without it, as it would go on without it in training.
void lose_while_preparing(self_ptr self, const job_master_setup& setup, const member_lost& lost);

std::size_t min_nodes(const job_master_setup& setup);

caf::timespan rejoin_timeout(const job_master_setup& setup);

void next_round(self_ptr self, const job_master_setup& setup, bool makeup);

bool take_joiner(self_ptr self, const job_master_setup& setup, const member_joined& joined);

} // namespace strom::actors::job_steps
