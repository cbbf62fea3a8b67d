#pragma once
// strom's public API for host programs: train jobs inside the host's process.
//
//   caf::actor_system_config config;
//   strom::runtime::configure_for_strom(config);  // before the system exists
//   caf::actor_system system{config};
//   strom::embedded_runtime strom_runtime{system};
//   auto job = strom::runtime::load_job_file("examples/fashion_mlp.job");
//   auto report = strom_runtime.train(*job, {});
//
// Link strom::strom (find_package(strom)). See examples/embedded for a whole host program.

#include "strom/runtime/embedded_runtime.hpp"
#include "strom/runtime/job_client.hpp"
#include "strom/runtime/job_spec.hpp"
#include "strom/runtime/local_training.hpp"
#include "strom/runtime/metrics_report.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/training_progress.hpp"
