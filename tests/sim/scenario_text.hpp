#pragma once
// Scenario text for the sim tests: a small inline job and given costs, with the parts a test
// changes passed in.

#include <string>

namespace strom::test {

/// A tiny job (10 inputs, 2 classes, batches of 10) at staleness `staleness`.
inline std::string inline_job(int staleness = 1) {
  return "job = (inline = (name = \"tiny\", network = (input = (width = 10), "
         "layers = [(output = (units = 2))]), training = (batchSize = 10), "
         "distributed = (staleness = " + std::to_string(staleness) + ")))";
}

/// Given costs: each step `step` seconds, encode, decode and overhead `share` seconds each,
/// frames of `frame_bytes`.
inline std::string given_costs(double step, double share, unsigned long frame_bytes) {
  return "costs = (given = (stepSeconds = " + std::to_string(step) + ", encodeSeconds = "
         + std::to_string(share) + ", decodeSeconds = " + std::to_string(share)
         + ", overheadSeconds = " + std::to_string(share)
         + ", frameBytes = " + std::to_string(frame_bytes) + "))";
}

/// A whole scenario: `cluster`, the tiny job, `length` ("steps = 100"), costs and `rest`
/// (events, expectations, model options), each a "field = value" text.
inline std::string scenario_text(const std::string& cluster, const std::string& length,
                                 const std::string& costs, const std::string& rest = "",
                                 int staleness = 1) {
  return "(name = \"test\", mode = model, cluster = (" + cluster + "), " + inline_job(staleness)
         + ", " + length + ", " + costs + (rest.empty() ? "" : ", " + rest) + ")";
}

} // namespace strom::test
