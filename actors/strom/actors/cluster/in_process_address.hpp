#pragma once
// The address a node of a cluster inside one process (no network between its actor systems)
// announces: the scheduler knows such nodes for the internals of whoever runs the cluster.

namespace strom::actors {

inline constexpr const char* in_process_address = "in-process";

} // namespace strom::actors
