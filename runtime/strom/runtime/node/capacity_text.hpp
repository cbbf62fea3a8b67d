#pragma once
// The text of what a node offers, as flags give it: a memory limit (--memory-limit on
// strom node and strom train) and speed factors (--speed-factor and --speed-drift on strom
// node, --node-speeds and --speed-drift on strom train; a testing aid,
// actors/worker/compute_slowdown.hpp). One parser for every command,
// so the same text means the same bytes everywhere.

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/compute/result.hpp"

namespace strom::runtime {

/// Bytes from "BYTES[SUFFIX]": a whole number, then K, M, G or T (or KiB, MiB, GiB, TiB:
/// powers of 1024, as ulimit and docker --memory read them), or kB, MB, GB, TB (powers of
/// 1000, as strom prints sizes), or B or nothing. Fails, naming `flag` and the text, for
/// anything else, for 0 and for more than 64 bits hold.
result<std::uint64_t> parse_byte_count(std::string_view text, std::string_view flag);

/// A speed factor in (0, 1]: a node computes F times as fast by waiting (1/F - 1) times each
/// computation's duration after it. A factor above 1 cannot be made by waiting: the error says
/// to slow the other nodes instead. Errors name `flag` and the text.
result<double> parse_speed_factor(std::string_view text, std::string_view flag);

/// "F1,F2,...": one speed factor (parse_speed_factor) per node, exactly `nodes` of them.
result<std::vector<double>> parse_node_speeds(std::string_view text, std::uint32_t nodes,
                                              std::string_view flag);

/// "F@EPOCH": from 1-based epoch EPOCH on, the node computes at speed factor F
/// (parse_speed_factor); the drift's epoch is kept 0-based. Errors name `flag` and the text.
result<actors::speed_drift> parse_speed_drift(std::string_view text, std::string_view flag);

/// "NODE=F@EPOCH,...": drifts (parse_speed_drift) of 1-based worker nodes among `nodes`, each
/// node at most once; as (0-based node, drift) pairs.
result<std::vector<std::pair<std::uint32_t, actors::speed_drift>>>
parse_node_drifts(std::string_view text, std::uint32_t nodes, std::string_view flag);

} // namespace strom::runtime
