#define BOOST_TEST_MODULE actors_roles
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include <caf/all.hpp>

#include "strom/actors/protocol/roles.hpp"
#include "support/deterministic_system.hpp"

using namespace strom::actors;

namespace {

/// Whether a handle of type Handle takes the message (Ts...): what CAF's send() and request()
/// assert at the sender, so `false` here means such a send does not compile.
template <class Handle, class... Ts>
constexpr bool accepts =
  caf::response_type_unbox<caf::signatures_of_t<Handle>, caf::detail::type_list<Ts...>>::valid;

/// What a request (Ts...) to a Handle is answered with.
template <class Handle, class... Ts>
using reply_to =
  caf::response_type_unbox_t<caf::signatures_of_t<Handle>, caf::detail::type_list<Ts...>>;

} // namespace

// Each role's handle takes its own messages, and a message of another role does not compile.
static_assert(accepts<pingable_actor, ping_atom>);
static_assert(!accepts<pingable_actor, job_assignment>);
static_assert(
  std::is_same_v<reply_to<pingable_actor, ping_atom>, caf::detail::type_list<pong_atom>>);

static_assert(accepts<hung_reporter_actor, node_hung_atom, std::uint64_t, std::string>);
static_assert(!accepts<hung_reporter_actor, node_hung_atom, std::uint64_t>);  // a field short
static_assert(!accepts<hung_reporter_actor, node_hung_atom, std::uint32_t, std::string>);

static_assert(accepts<agent_scheduler_actor, join_request>);
static_assert(std::is_same_v<reply_to<agent_scheduler_actor, join_request>,
                             caf::detail::type_list<join_reply>>);
static_assert(!accepts<agent_scheduler_actor, job_finished>);  // a job_master's, not a node's

static_assert(accepts<job_master_actor, member_lost>);
static_assert(std::is_same_v<reply_to<job_master_actor, member_joined>,
                             caf::detail::type_list<bool>>);
static_assert(!accepts<job_master_actor, join_request>);  // the scheduler's own

static_assert(accepts<hub_actor, stats_atom>);
static_assert(!accepts<hub_actor, shared_frame>);  // frames reach the hub from the nodes only
static_assert(accepts<keeper_actor, checkpoint_atom, std::uint64_t, caf::actor>);

static_assert(accepts<job_agent_actor, round_plan>);
static_assert(std::is_same_v<reply_to<job_agent_actor, job_assignment>,
                             caf::detail::type_list<node_ready>>);
static_assert(!accepts<job_agent_actor, join_reply>);  // the scheduler's answer to the agent
static_assert(!accepts<job_agent_actor, stop_atom, std::uint32_t>);  // a job id is 64 bits

static_assert(accepts<job_scheduler_actor, job_status>);
static_assert(accepts<job_scheduler_actor, forget_atom, std::uint64_t, std::uint64_t>);
static_assert(!accepts<job_scheduler_actor, join_request>);  // a node's, not a job_master's

static_assert(accepts<job_client_actor, job_epoch>);
static_assert(!accepts<job_client_actor, job_status>);  // the scheduler's, not a client's

static_assert(accepts<relay_peer_actor, average_part>);
static_assert(!accepts<frame_sink_actor, average_part>);  // partial sums go relay to relay
static_assert(!accepts<relay_peer_actor, publish_atom, shared_frame>);  // a trainer's own

static_assert(accepts<trainer_sibling_actor, kv_local_step>);
static_assert(!accepts<trainer_sibling_actor, round_work>);  // the agent's, not a sibling's

static_assert(accepts<trainer_relay_actor, publish_atom, shared_frame>);
static_assert(!accepts<trainer_relay_actor, shared_frame>);  // unpublished: a sibling's message

static_assert(accepts<trainer_supervisor_actor, step_report>);
static_assert(accepts<trainer_supervisor_actor, drain_report>);
static_assert(!accepts<trainer_supervisor_actor, round_plan>);  // the agent sends it the other way

BOOST_FIXTURE_TEST_CASE(a_typed_handle_reaches_the_actor_it_was_made_from,
                        strom::testing::deterministic_system) {
  // The roles' actors are dynamically typed; a handle is made typed with actor_cast and its
  // requests are answered by the same handlers as before.
  auto agent = sys.spawn([]() -> caf::behavior {
    return {[](ping_atom) { return pong_atom_v; }};
  });
  auto handle = caf::actor_cast<pingable_actor>(agent);
  BOOST_REQUIRE(handle);
  BOOST_TEST((handle.address() == agent.address()));
  bool answered = false;
  self->send(handle, ping_atom_v);
  sched.run();
  self->receive([&](pong_atom) { answered = true; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  BOOST_TEST(answered);
  self->send_exit(agent, caf::exit_reason::user_shutdown);
  sched.run();
}
