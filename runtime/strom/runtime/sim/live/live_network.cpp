#include "strom/runtime/sim/live/live_network.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "strom/actors/messages.hpp"
#include "strom/runtime/sim/live/virtual_seconds.hpp"

namespace strom::runtime::sim {

namespace {

using namespace std::chrono_literals;

/// Bytes a message other than a frame takes on a link (a drain marker, a request).
constexpr std::size_t control_bytes = 64;

/// A lost frame comes again after TCP's minimum retransmission timeout (Linux: 200 ms).
constexpr auto retransmission = 200ms;

/// A reordered frame arrives this much after it would have, so the next one overtakes it.
constexpr auto overtaken_by = 1ms;

/// The shim on one link: every message it gets goes to the network, which delivers it to
/// `target` when it arrives. It ends when the target does, as a proxy does when its node is
/// gone, so the relay that holds it forgets the peer.
caf::behavior link_shim(caf::event_based_actor* self, live_network* network, std::size_t from,
                        caf::actor target) {
  self->monitor(target);
  self->set_down_handler([self](const caf::down_msg&) { self->quit(); });
  self->set_default_handler([network, from, target](caf::scheduled_actor* shim,
                                                    caf::message_view& view)
                              -> caf::result<caf::message> {
    auto* element = shim->current_mailbox_element();
    network->carry(from, target, element->sender, element->mid, view.move_content_to_message());
    // The target answers a request itself, to its sender.
    return caf::delegated<caf::message>{};
  });
  return {[](actors::stats_atom) {}};
}

bool among(const std::vector<std::size_t>& nodes, std::size_t node) {
  return nodes.empty() || std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

/// A copy of `frame` with one byte of its segment flipped at a position drawn from `random`.
std::optional<compute::frame> corrupted(const compute::frame& frame, std::mt19937_64& random) {
  const auto bytes = frame.bytes();
  if (bytes.size() <= compute::frame_header_bytes)
    return std::nullopt;
  auto words = compute::allocate_frame_words(bytes.size() / sizeof(capnp::word));
  auto* copy = reinterpret_cast<std::byte*>(words.get());
  std::memcpy(copy, bytes.data(), bytes.size());
  std::uniform_int_distribution<std::size_t> position(compute::frame_header_bytes,
                                                      bytes.size() - 1);
  copy[position(random)] ^= std::byte{0xff};
  auto made = compute::frame::from_bytes({copy, bytes.size()}, std::move(words));
  if (!made)
    return std::nullopt;
  return std::move(*made);
}

} // namespace

live_network::live_network(std::uint64_t seed, sim_trace& trace, const time_point& now,
                           live_tls tls)
    : trace_(trace), now_(now), random_(seed), tls_(tls) {
  tls_figures_.on = tls_.identity != nullptr;
}

std::size_t live_network::add(live_endpoint endpoint) {
  endpoints_.push_back(std::move(endpoint));
  sending_until_.push_back(time_point{});
  return endpoints_.size() - 1;
}

std::size_t live_network::node_of(const caf::actor& actor) const {
  const auto* home = &actor->home_system();
  for (std::size_t i = 0; i < endpoints_.size(); ++i)
    if (endpoints_[i].system == home)
      return i;
  throw std::logic_error("live_network: an actor of a system outside the simulation");
}

caf::actor live_network::reach(std::size_t from, const caf::actor& peer_relay) {
  auto& shim = shims_[{from, peer_relay.address()}];
  if (!shim)
    shim = endpoints_.at(from).system->spawn(link_shim, this, from, peer_relay);
  return shim;
}

std::string live_network::publish(std::size_t node, const caf::actor& relay) {
  auto endpoint = fmt::format("sim:{}/{}", endpoints_.at(node).name, relay.id());
  published_[endpoint] = relay;
  return endpoint;
}

result<caf::actor> live_network::connect(std::size_t from, const std::string& endpoint) {
  auto found = published_.find(endpoint);
  if (found == published_.end())
    return error{fmt::format("no relay is published at {}", endpoint)};
  return reach(from, found->second);
}

void live_network::add_fault(const scenario_event& fault, const std::vector<std::size_t>& from,
                             const std::vector<std::size_t>& to, time_point until) {
  faults_.push_back({fault, from, to, until});
}

std::optional<live_network::time_point> live_network::next_arrival() const {
  if (queue_.empty())
    return std::nullopt;
  return queue_.begin()->first.first;
}

live_link_figures& live_network::figures(std::size_t from, std::size_t to) {
  for (auto& link : links_)
    if (link.from == from && link.to == to)
      return link;
  return links_.emplace_back(live_link_figures{from, to, 0, 0});
}

void live_network::note(const char* fault, std::size_t from, std::size_t to,
                        std::size_t bytes) {
  trace_.add(nlohmann::ordered_json{{"t", now_.time_since_epoch().count()},
                                    {"fault", fault},
                                    {"from", endpoints_[from].name},
                                    {"to", endpoints_[to].name},
                                    {"bytes", bytes}}
               .dump());
}

bool live_network::apply_faults(std::size_t from, std::size_t to, time_point& arrival,
                                caf::message& content, bool& duplicate) {
  std::uniform_real_distribution<double> draw(0.0, 1.0);
  const auto& frame = content.get_as<actors::shared_frame>(0).value;
  const auto bytes = frame.size();
  // The link's own weather: loss costs a retransmission, duplicates and reordering happen.
  const auto& link = endpoints_[from].link;
  if (link.loss > 0 && draw(random_) < link.loss) {
    arrival += retransmission;
    ++counts_.delayed;
  }
  if (link.duplication > 0 && draw(random_) < link.duplication) {
    duplicate = true;
    ++counts_.duplicated;
  }
  if (link.reordering > 0 && draw(random_) < link.reordering) {
    arrival += overtaken_by;
    ++counts_.reordered;
  }
  for (const auto& fault : faults_) {
    if (now_ >= fault.until || !among(fault.from, from) || !among(fault.to, to))
      continue;
    if (draw(random_) >= fault.spec.rate)
      continue;
    switch (fault.spec.fault) {
      case frame_fault_kind::drop:
        // strom's frames travel over TCP, which sends a lost segment again: the frame comes
        // one retransmission timeout late, as the model assumes. (A frame lost above the
        // transport, which TCP cannot lose, would stall a synchronous job until its silence
        // limit: nothing in strom asks for a missing sequence again.)
        arrival += retransmission;
        ++counts_.dropped;
        note("drop", from, to, bytes);
        break;
      case frame_fault_kind::duplicate:
        duplicate = true;
        ++counts_.duplicated;
        note("duplicate", from, to, bytes);
        break;
      case frame_fault_kind::reorder:
        arrival += overtaken_by;
        ++counts_.reordered;
        note("reorder", from, to, bytes);
        break;
      case frame_fault_kind::delay:
        arrival += to_timespan(fault.spec.delay_seconds);
        ++counts_.delayed;
        note("delay", from, to, bytes);
        break;
      case frame_fault_kind::corrupt: {
        ++counts_.corrupted;
        note("corrupt", from, to, bytes);
        auto bad = corrupted(frame, random_);
        if (!bad)
          return false;  // the receiving side could not even make it a frame
        content = caf::make_message(actors::shared_frame{std::move(*bad)});
        break;
      }
    }
  }
  return true;
}

void live_network::carry(std::size_t from, const caf::actor& target,
                         caf::strong_actor_ptr sender, caf::message_id mid,
                         caf::message content) {
  const auto to = node_of(target);
  if (mid.is_request()) {
    // Answered directly: requests are control, not timed (see the header).
    target->enqueue(caf::make_mailbox_element(std::move(sender), mid, {}, std::move(content)),
                    nullptr);
    return;
  }
  const bool is_frame = content.match_elements<actors::shared_frame>();
  const auto plain =
    is_frame ? content.get_as<actors::shared_frame>(0).value.size() : control_bytes;
  const auto& link = endpoints_[from].link;
  auto& sending = sending_until_[from];
  auto start = std::max(now_, sending);
  tls_pipe* tls = nullptr;
  if (tls_.identity) {
    bool opened = false;
    tls = secured(from, to, opened);
    if (!tls)
      return;  // no connection: nothing crosses
    if (opened)
      start += 2 * to_timespan(link.latency_seconds);  // the handshake's round trip first
  }
  // The sender's link sends one message at a time at its bandwidth, then latency. Only
  // frames are bytes here to seal: other messages are charged their records' size alone.
  const auto bytes = tls ? tls_wire_bytes(plain) : plain;
  const auto seal = tls && is_frame ? static_cast<double>(plain) / tls_.seal_bytes_per_second : 0;
  const auto open = tls && is_frame ? static_cast<double>(plain) / tls_.open_bytes_per_second : 0;
  sending = start + to_timespan(seal + static_cast<double>(bytes) / link.bytes_per_second);
  auto arrival = sending + to_timespan(link.latency_seconds + open);
  auto& figure = figures(from, to);
  figure.bytes += bytes;
  figure.frames += is_frame ? 1 : 0;
  bool duplicate = false;
  if (is_frame && !apply_faults(from, to, arrival, content, duplicate))
    return;
  if (tls && is_frame && !through_tls(*tls, content))
    return;
  // Delivered as from the peer's own shim to this node, so the receiving relay knows the
  // sender as the peer it holds.
  if (auto back = shims_.find({to, caf::actor_cast<caf::actor_addr>(sender)});
      back != shims_.end())
    sender = caf::actor_cast<caf::strong_actor_ptr>(back->second);
  if (duplicate)
    schedule(arrival + overtaken_by, {target, sender, mid, content});
  schedule(arrival, {target, std::move(sender), mid, std::move(content)});
}

tls_pipe* live_network::secured(std::size_t from, std::size_t to, bool& opened) {
  auto& pipe = tls_pipes_[{from, to}];
  if (pipe)
    return pipe.get();
  // One identity for every node: each end verifies the other's certificate against the CA.
  auto made = tls_pipe::open(*tls_.identity, *tls_.identity);
  if (!made) {
    ++tls_figures_.failures;
    note("tls_refused", from, to, 0);
    tls_pipes_.erase({from, to});  // tried again with the next message
    return nullptr;
  }
  pipe = std::move(*made);
  opened = true;
  ++tls_figures_.links;
  tls_figures_.handshake_bytes += pipe->handshake_bytes();
  return pipe.get();
}

bool live_network::through_tls(tls_pipe& pipe, caf::message& content) {
  const auto bytes = content.get_as<actors::shared_frame>(0).value.bytes();
  auto records = pipe.seal(bytes);
  auto words = compute::allocate_frame_words(bytes.size() / sizeof(capnp::word));
  std::span<std::byte> opened{reinterpret_cast<std::byte*>(words.get()), bytes.size()};
  if (!records || !pipe.open_into(*records, opened)) {
    ++tls_figures_.failures;
    return false;
  }
  auto frame = compute::frame::from_bytes(opened, std::move(words));
  if (!frame) {
    ++tls_figures_.failures;
    return false;
  }
  content = caf::make_message(actors::shared_frame{std::move(*frame)});
  return true;
}

void live_network::schedule(time_point at, in_flight message) {
  queue_.emplace(std::make_pair(at, queued_++), std::move(message));
}

void live_network::close() {
  for (const auto& [key, shim] : shims_)
    caf::anon_send_exit(shim, caf::exit_reason::user_shutdown);
  shims_.clear();
  published_.clear();
  queue_.clear();
}

bool live_network::deliver_arrived() {
  bool any = false;
  while (!queue_.empty() && queue_.begin()->first.first <= now_) {
    auto message = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    message.target->enqueue(caf::make_mailbox_element(std::move(message.sender), message.mid,
                                                      {}, std::move(message.content)),
                            nullptr);
    any = true;
  }
  return any;
}

} // namespace strom::runtime::sim
