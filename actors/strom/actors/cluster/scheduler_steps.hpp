#pragma once
// The scheduler's steps, shared by the two files that make it up: scheduler.cpp (membership,
// jobs and clients) and scheduler_restart.cpp (what the scheduler keeps in its store and how
// it takes it up again after a restart). Internal to those files.

#include <cstdint>
#include <map>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/cluster/scheduler.hpp"

namespace strom::actors::scheduler_steps {

using self_ptr = caf::stateful_actor<scheduler_state>*;

// -- scheduler.cpp ----------------------------------------------------------------------------

bool runs_on(const job_record& job, std::uint64_t node_id);

bool is_free(const scheduler_state& st, std::uint64_t node_id);

std::map<std::uint64_t, job_record>::iterator sending_master(self_ptr self);

std::uint64_t start_job(self_ptr self, const scheduler_setup& setup, job_master_setup job);

void remember_outcome(self_ptr self, const scheduler_setup& setup, job_status shown,
                      job_finished outcome);

void offer_to_a_job(self_ptr self, const scheduler_setup& setup, const member_joined& joined);

/// Places `job` for `client` now, or says why it cannot.
submit_reply submit_now(self_ptr self, const scheduler_setup& setup, const job_submission& job,
                        const job_client_actor& client);

/// Whether enough nodes joined for `job` (its --nodes and --servers, at least one each).
bool enough_joined(const scheduler_state& st, const job_submission& job);

// -- scheduler_restart.cpp --------------------------------------------------------------------

void persist(self_ptr self, const scheduler_setup& setup);

job_status status_of_resuming(const saved_job& saved);

void take_up(self_ptr self, const scheduler_setup& setup);

void end_resuming(self_ptr self, const scheduler_setup& setup,
                  std::map<std::uint64_t, resuming_job>::iterator job, job_finished outcome);

void try_resume(self_ptr self, const scheduler_setup& setup, std::uint64_t job_id,
                bool deadline);

void place_joined(self_ptr self, const scheduler_setup& setup, const member_joined& joined);

/// Answers the held submissions that enough nodes joined for, or, once the scheduler no
/// longer waits for its nodes, all of them.
void release_held(self_ptr self, const scheduler_setup& setup);

void checkpointed(self_ptr self, const scheduler_setup& setup, const job_checkpointed& done);

/// Job `job`'s master stops the job to start it again from its latest checkpoint (status
/// "restarting"); `outcome` is what the attempt got to. The record counts the restart and the
/// attempt's faults and samples since the checkpoint, which are trained again.
void note_restart(job_record& job, const job_finished& outcome);

/// Job `job`'s master ended after note_restart: the job waits for its nodes and resumes from
/// its checkpoint, as after the scheduler's restart.
void restart_job(self_ptr self, const scheduler_setup& setup,
                 std::map<std::uint64_t, job_record>::iterator job);

} // namespace strom::actors::scheduler_steps
