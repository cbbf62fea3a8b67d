#pragma once
// A Boost.Test precondition for the GPU tests: where no CUDA device can run (a build without
// the CUDA backend, no driver, no GPU) each such test is skipped, and the reason is printed.
// Use as BOOST_AUTO_TEST_CASE(name, *boost::unit_test::precondition(support::gpu_present)).

#include <boost/test/unit_test.hpp>

#include "strom/compute/device/device_kind.hpp"

namespace support {

inline boost::test_tools::assertion_result gpu_present(boost::unit_test::test_unit_id) {
  const auto cuda = strom::compute::find_cuda();
  boost::test_tools::assertion_result result{cuda.usable};
  if (!cuda.usable)
    result.message() << "skipped, no GPU here: " << cuda.why;
  return result;
}

} // namespace support
