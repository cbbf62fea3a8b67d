#define BOOST_TEST_MODULE actors_request_while_alive
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "strom/actors/errors.hpp"
#include "strom/actors/request_while_alive.hpp"
#include "support/deterministic_system.hpp"

// Requests given up at their target's loss, on the deterministic coordinator: no virtual time
// passes in these tests, so an answer that came only at a request's timeout (an hour) would
// never come.

using namespace strom::actors;
using namespace std::chrono_literals;

namespace {

/// Far longer than any test runs: an answer at the timeout fails the test.
constexpr caf::timespan one_hour = std::chrono::hours(1);

/// The node ids the requester knows its two targets by.
constexpr std::uint64_t first_node = 3;
constexpr std::uint64_t second_node = 4;

struct requester_state {
  pending_requests awaiting;
};

/// Asks `target` (node `node`) for its stats and tells `observer` the answer: "answered", or
/// the strom code of the error; gives up its requests to a node whose actor went down.
void ask(caf::stateful_actor<requester_state>* self, std::uint64_t node,
         const caf::actor& target, const caf::actor& observer) {
  request_while_alive(self, self->state.awaiting, node, target, one_hour, stats_atom_v)
    .then([self, observer](std::int32_t) { self->send(observer, std::string{"answered"}); },
          [self, observer](caf::error& err) {
            const auto code = strom_code_of(err);
            self->send(observer, code ? to_string(*code) : std::string{"other error"});
          });
}

/// A requester asking `first` (node 3) and `second` (node 4) once each; it gives up the
/// requests to a node whose actor ends (it monitors both) or that it is told was lost (as a
/// job_master is told member_lost, of a hung node too).
caf::behavior requester(caf::stateful_actor<requester_state>* self, caf::actor first,
                        caf::actor second, caf::actor observer) {
  self->monitor(first);
  self->monitor(second);
  self->set_down_handler([self, first](const caf::down_msg& down) {
    const auto node = down.source == first.address() ? first_node : second_node;
    self->state.awaiting.give_up(self, node, "its actor ended");
  });
  ask(self, first_node, first, observer);
  ask(self, second_node, second, observer);
  return {
    [self](forget_atom, std::uint64_t node) { self->state.awaiting.give_up(self, node, "it hung"); },
    [self, observer](ping_atom, std::uint64_t node, const caf::actor& target) {
      ask(self, node, target, observer);
    },
  };
}

/// A node's actor that takes a stats request and answers it only when told to (then 7), or
/// never when it ends first.
caf::behavior slow_node(caf::event_based_actor* self) {
  auto held = std::make_shared<caf::response_promise>();
  return {
    [self, held](stats_atom) -> caf::result<std::int32_t> {
      *held = self->make_response_promise();
      return caf::delegated<std::int32_t>{};
    },
    [held](pong_atom) { held->deliver(std::int32_t{7}); },
  };
}

struct two_nodes : strom::testing::deterministic_system {
  two_nodes() { sched.run(); }

  ~two_nodes() {
    for (const auto& a : {first, second, asking})
      self->send_exit(a, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// The answers the requester passed on so far, in order.
  std::vector<std::string> answers() {
    std::vector<std::string> got;
    bool more = true;
    while (more)
      self->receive([&](const std::string& answer) { got.push_back(answer); },
                    caf::after(0s) >> [&] { more = false; });
    return got;
  }

  caf::actor first = sys.spawn(slow_node);
  caf::actor second = sys.spawn(slow_node);
  caf::actor asking = sys.spawn(requester, first, second, me());
};

} // namespace

BOOST_AUTO_TEST_CASE(a_request_to_an_actor_that_died_holding_it_fails_at_once_as_peer_lost) {
  two_nodes env;
  BOOST_TEST(env.answers().empty());
  env.self->send_exit(env.first, caf::exit_reason::kill);
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"peer_lost"}));
}

BOOST_AUTO_TEST_CASE(giving_up_one_node_leaves_the_requests_to_others_waiting_for_their_answer) {
  two_nodes env;
  env.self->send_exit(env.first, caf::exit_reason::kill);
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"peer_lost"}));
  env.self->send(env.second, pong_atom_v);
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"answered"}));
}

BOOST_AUTO_TEST_CASE(an_answer_that_comes_after_its_request_was_given_up_is_dropped) {
  two_nodes env;
  env.self->send(env.asking, forget_atom_v, first_node);  // lost while it hangs
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"peer_lost"}));
  env.self->send(env.first, pong_atom_v);  // it wakes up and answers
  env.sched.run();
  BOOST_TEST(env.answers().empty());
}

BOOST_AUTO_TEST_CASE(a_request_answered_before_its_node_is_lost_sees_only_the_answer) {
  two_nodes env;
  env.self->send(env.first, pong_atom_v);
  env.sched.run();
  env.self->send_exit(env.first, caf::exit_reason::kill);
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"answered"}));
}

// CAF answers a request to an actor that is gone with request_receiver_down at once, before
// the requester heard of the node's loss: held back, the handler gets peer_lost only once the
// node is given up, so the loss is decided in one place (#40 item 6).
BOOST_AUTO_TEST_CASE(a_request_to_a_gone_actor_fails_only_once_its_node_is_given_up) {
  two_nodes env;
  constexpr std::uint64_t gone_node = 5;
  auto gone = env.sys.spawn(slow_node);
  env.self->send_exit(gone, caf::exit_reason::kill);
  env.sched.run();
  env.self->send(env.asking, ping_atom_v, gone_node, gone);
  env.sched.run();
  BOOST_TEST(env.answers().empty());
  env.self->send(env.asking, forget_atom_v, gone_node);
  env.sched.run();
  BOOST_TEST((env.answers() == std::vector<std::string>{"peer_lost"}));
  env.self->send(env.asking, forget_atom_v, gone_node);  // given up already: nothing more
  env.sched.run();
  BOOST_TEST(env.answers().empty());
}
