#pragma once
// The links of a live simulation: a shim actor on each link between two nodes' relays, and the
// queue of what is in flight on them in virtual time. A relay sends to the shim as it would to
// the peer's proxy; the shim hands the message to this network, which delivers it to the peer
// when the link's bandwidth and latency say it arrives, as if from the peer's own shim (so
// relays see the same senders as across CAF's middleman). Frame faults are applied here, by a
// random stream drawn from the run's seed: drop (sent again by TCP: late), duplicate,
// reorder, delay, corrupt. Requests
// (a master's forget or stats) cross at once and are answered directly: only one-way messages
// are timed, which is all that frames and drain markers are.
//
// With TLS (strom sim --tls-*), each link from one node to another is a TLS connection made
// in memory with the node identity given (tls_pipe.hpp): its first message waits for the
// handshake's round trip, every frame is sealed and opened for real, and what crosses the
// link (and takes its bandwidth) are the records, sealing and opening charged at the
// calibrated rates. Frame faults hit the frame before it is sealed: a sender's damage, which
// TLS does not see (damage on the wire would fail the record's check and end the connection).

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "strom/compute/result.hpp"
#include "strom/runtime/sim/tls_pipe.hpp"
#include "strom/runtime/sim/model/model.hpp"
#include "strom/runtime/sim/scenario.hpp"
#include "strom/runtime/sim/sim_trace.hpp"

namespace strom::runtime::sim {

/// A node of the simulated network: its actor system and its link.
struct live_endpoint {
  std::string name;
  caf::actor_system* system = nullptr;
  link_model link;
};

/// Bytes and frames that crossed from one node to another.
struct live_link_figures {
  std::size_t from = 0;
  std::size_t to = 0;
  std::uint64_t bytes = 0;
  std::uint64_t frames = 0;
};

/// TLS on a simulated network's links.
struct live_tls {
  const tls_context* identity = nullptr;  ///< what every node presents; null: no TLS
  double seal_bytes_per_second = 0;
  double open_bytes_per_second = 0;
};

class live_network {
public:
  using time_point = caf::actor_clock::time_point;

  /// `trace` is told every fault applied; `now` is the simulation's virtual time.
  live_network(std::uint64_t seed, sim_trace& trace, const time_point& now, live_tls tls = {});

  /// Adds a node; its index in the network.
  std::size_t add(live_endpoint endpoint);

  /// The handle through which actors of node `from` reach `peer_relay` (of another node): a
  /// shim on that link, made once per (node, peer).
  caf::actor reach(std::size_t from, const caf::actor& peer_relay);

  /// Publishes `relay` of node `node` for mesh neighbours; its endpoint ("sim:NODE/ID").
  std::string publish(std::size_t node, const caf::actor& relay);

  /// The link from node `from` to the relay published at `endpoint`; the error names it.
  result<caf::actor> connect(std::size_t from, const std::string& endpoint);

  /// Frames from `from` to `to` (empty: any node) meet `fault` from now until `until`
  /// (time_point::max(): for good).
  void add_fault(const scenario_event& fault, const std::vector<std::size_t>& from,
                 const std::vector<std::size_t>& to, time_point until);

  /// When the next message in flight arrives, if any is.
  std::optional<time_point> next_arrival() const;

  /// Hands every message that arrived by now to its receiver; whether any did.
  bool deliver_arrived();

  /// Ends every shim and drops what is in flight (before the nodes' systems end).
  void close();

  /// Called by a shim: `content` sent by `sender` (with `mid`) on the link from node `from`
  /// to the node of `target`.
  void carry(std::size_t from, const caf::actor& target, caf::strong_actor_ptr sender,
             caf::message_id mid, caf::message content);

  const std::vector<live_link_figures>& links() const noexcept { return links_; }
  const frame_fault_counts& faults() const noexcept { return counts_; }
  const tls_figures& tls() const noexcept { return tls_figures_; }
  const live_endpoint& endpoint(std::size_t index) const { return endpoints_.at(index); }

private:
  struct in_flight {
    caf::actor target;
    caf::strong_actor_ptr sender;
    caf::message_id mid;
    caf::message content;
  };
  struct active_fault {
    scenario_event spec;
    std::vector<std::size_t> from, to;  // empty: any node
    time_point until;
  };

  std::size_t node_of(const caf::actor& actor) const;
  live_link_figures& figures(std::size_t from, std::size_t to);
  /// Puts `message` on the queue to arrive at `at`.
  void schedule(time_point at, in_flight message);
  /// Applies the faults that match a frame on from -> to; false: it cannot be delivered.
  bool apply_faults(std::size_t from, std::size_t to, time_point& arrival,
                    caf::message& content, bool& duplicate);
  void note(const char* fault, std::size_t from, std::size_t to, std::size_t bytes);
  /// The TLS connection from `from` to `to`, made on first use (then `opened` is set); null
  /// when its handshake failed (noted in the trace).
  tls_pipe* secured(std::size_t from, std::size_t to, bool& opened);
  /// `content`'s frame sealed and opened on `link`; false when it could not be.
  bool through_tls(tls_pipe& pipe, caf::message& content);

  sim_trace& trace_;
  const time_point& now_;
  std::mt19937_64 random_;
  std::vector<live_endpoint> endpoints_;
  std::map<std::pair<std::size_t, caf::actor_addr>, caf::actor> shims_;
  std::map<std::string, caf::actor> published_;
  std::vector<active_fault> faults_;
  std::vector<time_point> sending_until_;  // by node: its link busy sending until then
  std::multimap<std::pair<time_point, std::uint64_t>, in_flight> queue_;
  std::uint64_t queued_ = 0;  // ties in time arrive in the order sent
  std::vector<live_link_figures> links_;
  frame_fault_counts counts_;
  live_tls tls_;
  std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<tls_pipe>> tls_pipes_;
  tls_figures tls_figures_;
};

} // namespace strom::runtime::sim
