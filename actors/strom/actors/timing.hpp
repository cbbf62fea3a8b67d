#pragma once
// Every interval and timeout of strom's actors in one struct, set from flags by the runtime
// and handed down: the scheduler passes it to its job masters, a node agent to its trainers.
// Actors read time only through their CAF clock (self->clock(), delayed_send, request
// timeouts), which CAF's test coordinator replaces with virtual time; the one wait outside
// it, a parked trainer's spin, is `park_spin` here, which a simulation sets to 0.

#include <chrono>

#include <caf/timespan.hpp>

namespace strom::actors {

struct timing {
  // -- membership: the scheduler ---------------------------------------------------------
  /// Pings to each node (at least four per heartbeat_timeout; --heartbeat-interval).
  caf::timespan heartbeat_interval = std::chrono::seconds(1);
  /// A node silent this long is lost (--heartbeat-timeout).
  caf::timespan heartbeat_timeout = std::chrono::seconds(10);

  // -- a job: its job_master ---------------------------------------------------------------
  /// A job paused below its minimum of nodes fails after this long without enough joining,
  /// and a job resumed after the scheduler's restart waits this long for its nodes
  /// (--rejoin-timeout overrides it per job).
  caf::timespan rejoin_timeout = std::chrono::seconds(60);
  /// Time a live trainer (or a checkpoint keeper) may take to send its snapshot.
  caf::timespan restore_timeout = std::chrono::minutes(2);
  /// Time a node may take to load a job's data and build its replicas.
  caf::timespan prepare_timeout = std::chrono::minutes(5);
  /// Time a node or relay may take to answer a request that needs no work (stop, stats).
  caf::timespan answer_timeout = std::chrono::seconds(10);
  /// A running job whose nodes report nothing for this long fails.
  caf::timespan silence_limit = std::chrono::minutes(5);
  /// A node whose steps stand still this long in a round starts the stall watch, which names
  /// whom the job waits for in the log and in status (--stall-warning; Horovod's stall
  /// inspector warns after 60 s, but one step of strom's jobs takes milliseconds).
  caf::timespan stall_warning = std::chrono::seconds(10);

  // -- a node: its agent -------------------------------------------------------------------
  /// Time the scheduler may take to answer a join.
  caf::timespan join_timeout = std::chrono::seconds(10);
  /// A joined node asks the scheduler this often whether it still counts as a member, so it
  /// hears of its drop even when the scheduler no longer pings it.
  caf::timespan keepalive_interval = std::chrono::seconds(1);
  /// The scheduler silent this long, or gone and not back within it, the node gives up
  /// (--reconnect-timeout): six times the default heartbeat timeout, so a scheduler busy for
  /// a while is not given up on before it would give up on the node.
  caf::timespan reconnect_timeout = std::chrono::seconds(60);
  /// Progress goes to the scheduler at most this often.
  caf::timespan progress_interval = std::chrono::milliseconds(250);
  /// Time a snapshot may take to reach this node from a peer or go out to one (8.5 MB for the
  /// example MLP take ~50 ms on loopback; a 100 MB model over a slow link takes seconds).
  caf::timespan snapshot_timeout = std::chrono::minutes(2);

  // -- waiting: trainers -------------------------------------------------------------------
  /// A parked trainer (waiting for the frames the staleness bound needs) keeps its thread on
  /// its core for up to this long before it lets the thread block: the frame usually comes
  /// within tens of microseconds, and a blocked thread wakes through the kernel (and, in a
  /// VM, through an interrupt to a halted virtual CPU). Measured on 2 workers: context
  /// switches of a 3-epoch run 2.1k -> 0.8k, +2.4% and +5.4% samples/s (two runs of 8
  /// alternating pairs); 4 nodes on 2 cores were no slower in 2 pairs (it yields while it
  /// waits). 0: block at once (virtual time has nothing to spin for).
  caf::timespan park_spin = std::chrono::microseconds(500);
};

} // namespace strom::actors
