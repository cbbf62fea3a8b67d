#define BOOST_TEST_MODULE runtime_launch_lists
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "strom/runtime/launch/host_list.hpp"
#include "strom/runtime/launch/slurm_nodelist.hpp"

// strom launch's two host lists: its hosts file and Slurm's compact node lists.

using namespace strom::runtime::launch;

namespace {

/// The error of parsing `text` as hosts file "hosts.txt", which must fail.
std::string hosts_error(const std::string& text) {
  auto parsed = parse_host_list(text, "hosts.txt");
  BOOST_REQUIRE_MESSAGE(!parsed, "'" << text << "' parsed but should not");
  return parsed.err().message;
}

/// The names `list` expands to, which must succeed.
std::vector<std::string> expanded(const std::string& list) {
  auto nodes = expand_slurm_nodelist(list);
  BOOST_REQUIRE_MESSAGE(nodes, list << ": " << (nodes ? "" : nodes.err().message));
  return *nodes;
}

std::string nodelist_error(const std::string& list) {
  auto nodes = expand_slurm_nodelist(list);
  BOOST_REQUIRE_MESSAGE(!nodes, "'" << list << "' expanded but should not");
  return nodes.err().message;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Sets the SLURM_* variables of one test, unsetting them at its end.
struct slurm_environment {
  slurm_environment(const char* nodelist, const char* procid, const char* ntasks) {
    ::setenv("SLURM_NODELIST", nodelist, 1);
    ::setenv("SLURM_PROCID", procid, 1);
    ::setenv("SLURM_NTASKS", ntasks, 1);
  }
  ~slurm_environment() {
    for (const char* name : {"SLURM_NODELIST", "SLURM_PROCID", "SLURM_NTASKS"})
      ::unsetenv(name);
  }
};

} // namespace

BOOST_AUTO_TEST_CASE(a_hosts_file_lists_local_and_ssh_hosts_with_their_workers) {
  auto hosts = parse_host_list("# the cluster\n"
                               "localhost\n"
                               "\n"
                               "127.0.0.1 workers=2   # a second local node\n"
                               "alice@gpu7:2222 workers=4\n"
                               "10.0.0.5\n"
                               "127.0.0.1:22\n",
                               "hosts.txt");
  BOOST_REQUIRE_MESSAGE(hosts, (hosts ? "" : hosts.err().message));
  BOOST_REQUIRE_EQUAL(hosts->size(), 5u);
  const auto& h = *hosts;
  BOOST_TEST(h[0].local());
  BOOST_TEST(h[0].workers == 0u);
  BOOST_TEST(h[0].origin == "hosts.txt:2");
  BOOST_TEST(h[1].local());
  BOOST_TEST(h[1].workers == 2u);
  BOOST_TEST(!h[2].local());
  BOOST_TEST(h[2].user == "alice");
  BOOST_TEST(h[2].host == "gpu7");
  BOOST_TEST(h[2].ssh_port == 2222u);
  BOOST_TEST(h[2].workers == 4u);
  BOOST_TEST(h[2].ssh_destination() == "alice@gpu7");
  BOOST_TEST(!h[3].local());
  BOOST_TEST(h[3].ssh_destination() == "10.0.0.5");
  BOOST_TEST(!h[4].local(), "a port means ssh, even on loopback");
  BOOST_TEST(h[4].ssh_port == 22u);
}

BOOST_AUTO_TEST_CASE(a_bad_ssh_port_is_named_with_its_file_and_line) {
  const auto message = hosts_error("localhost\ngpu7:99999\n");
  BOOST_TEST(contains(message, "hosts.txt:2: 'gpu7:99999'"), message);
  BOOST_TEST(contains(message, "port"), message);
}

BOOST_AUTO_TEST_CASE(an_unknown_setting_is_named_with_its_file_and_line) {
  const auto message = hosts_error("localhost cores=3\n");
  BOOST_TEST(contains(message, "hosts.txt:1: 'cores=3'"), message);
}

BOOST_AUTO_TEST_CASE(a_host_says_its_role_and_name) {
  auto hosts = parse_host_list("localhost role=server name=ps1\nlocalhost role=worker workers=1\n"
                               "localhost\n",
                               "hosts.txt");
  BOOST_REQUIRE_MESSAGE(hosts, (hosts ? "" : hosts.err().message));
  const auto& h = *hosts;
  BOOST_TEST(h[0].role == "server");
  BOOST_TEST(h[0].name == "ps1");
  BOOST_TEST(h[1].role == "worker");
  BOOST_TEST(h[1].name.empty());
  BOOST_TEST(h[2].role.empty());
}

BOOST_AUTO_TEST_CASE(a_bad_role_is_named_with_its_file_line_and_value) {
  const auto message = hosts_error("localhost\nlocalhost role=boss\n");
  BOOST_TEST(contains(message, "hosts.txt:2: 'role=boss': the role is not worker or server"),
             message);
}

BOOST_AUTO_TEST_CASE(a_name_that_cannot_name_a_certificate_is_refused) {
  const auto message = hosts_error("localhost name=a/b\n");
  BOOST_TEST(contains(message, "hosts.txt:1: 'name=a/b'"), message);
}

BOOST_AUTO_TEST_CASE(zero_workers_are_named_with_their_file_and_line) {
  const auto message = hosts_error("# first\nlocalhost workers=0\n");
  BOOST_TEST(contains(message, "hosts.txt:2: 'workers=0'"), message);
}

BOOST_AUTO_TEST_CASE(a_host_name_with_a_quote_is_refused) {
  const auto message = hosts_error("localhost\n\nno'de\n");
  BOOST_TEST(contains(message, "hosts.txt:3: 'no'de'"), message);
}

BOOST_AUTO_TEST_CASE(an_empty_user_is_refused) {
  const auto message = hosts_error("@gpu7\n");
  BOOST_TEST(contains(message, "hosts.txt:1: '@gpu7'"), message);
}

BOOST_AUTO_TEST_CASE(a_hosts_file_without_hosts_is_refused) {
  const auto message = hosts_error("# nothing yet\n\n");
  BOOST_TEST(contains(message, "hosts.txt: no hosts"), message);
}

BOOST_AUTO_TEST_CASE(a_missing_hosts_file_is_named) {
  auto hosts = read_host_file("/nonexistent/hosts.txt");
  BOOST_REQUIRE(!hosts);
  BOOST_TEST(contains(hosts.err().message, "'/nonexistent/hosts.txt'"), hosts.err().message);
}

BOOST_AUTO_TEST_CASE(a_nodelist_of_plain_names_lists_them_in_order) {
  BOOST_TEST(expanded("gpu5,cpu1,localhost") ==
             (std::vector<std::string>{"gpu5", "cpu1", "localhost"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_bracketed_range_expands_keeping_its_zero_padding) {
  BOOST_TEST(expanded("node[01-03,07],gpu5") ==
             (std::vector<std::string>{"node01", "node02", "node03", "node07", "gpu5"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_unpadded_range_grows_past_its_first_bound_width) {
  BOOST_TEST(expanded("n[9-11]") == (std::vector<std::string>{"n9", "n10", "n11"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(several_bracket_groups_in_one_name_multiply) {
  BOOST_TEST(expanded("r[1-2]n[3,5]-ib") ==
             (std::vector<std::string>{"r1n3-ib", "r1n5-ib", "r2n3-ib", "r2n5-ib"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(malformed_nodelists_are_refused_naming_the_problem) {
  BOOST_TEST(contains(nodelist_error("n[3-1]"), "'3-1' runs backwards"));
  BOOST_TEST(contains(nodelist_error("n[1-2"), "'[' without ']'"));
  BOOST_TEST(contains(nodelist_error("n1]"), "']' without '['"));
  BOOST_TEST(contains(nodelist_error("n[a-b]"), "'a' is not a number"));
  BOOST_TEST(contains(nodelist_error("a,,b"), "an empty name"));
  BOOST_TEST(contains(nodelist_error(""), "an empty name"));
  BOOST_TEST(contains(nodelist_error("n[1-99999999999]"), "more than"));
}

BOOST_AUTO_TEST_CASE(a_slurm_task_reads_its_rank_count_and_nodes) {
  slurm_environment environment{"node[1-2]", "1", "2"};
  auto task = slurm_task_from_environment();
  BOOST_REQUIRE_MESSAGE(task, (task ? "" : task.err().message));
  BOOST_REQUIRE(task->has_value());
  BOOST_TEST((*task)->rank == 1u);
  BOOST_TEST((*task)->tasks == 2u);
  BOOST_TEST((*task)->nodes == (std::vector<std::string>{"node1", "node2"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_rank_beyond_the_task_count_is_refused) {
  slurm_environment environment{"node1", "2", "2"};
  auto task = slurm_task_from_environment();
  BOOST_REQUIRE(!task);
  BOOST_TEST(contains(task.err().message, "SLURM_PROCID=2"), task.err().message);
}

BOOST_AUTO_TEST_CASE(outside_slurm_there_is_no_task) {
  ::unsetenv("SLURM_PROCID");
  auto task = slurm_task_from_environment();
  BOOST_REQUIRE(task);
  BOOST_TEST(!task->has_value());
}
