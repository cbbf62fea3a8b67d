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
//
// A host that brings its own model and wants only parameter servers (MXNet's kv.push /
// kv.pull) makes a strom::kv_store in its actor system and a strom::kv_client per worker
// rank (<strom/runtime/kv_store.hpp>; examples/kvstore):
//
//   strom::kv_store store{system, {.servers = 1, .workers = 2}};
//   auto kv = store.client(rank);
//   kv.init(0, weights).get();
//   kv.push(0, gradient);
//   kv.pull(0, weights).get();  // after the step that push took part in
//
// A host that talks to a remote cluster reaches its scheduler with connect_to_scheduler (or
// runs a node with run_worker_node); with TLS it loads its identity once and sets it in
// connect_options::limits.tls.context (worker_node_options::tls):
//
//   auto identity = strom::runtime::tls_context::load({"ca.pem", "alice.pem", "alice.key"});
//   strom::runtime::connect_options options;
//   options.limits.tls.context = *identity;
//   auto scheduler = strom::runtime::connect_to_scheduler(system, {"10.0.0.1", 7070}, options);
//
// A host that runs simulation scenarios (the harness of `strom sim` is this library; the
// command is a thin front over it):
//
//   auto scenario = strom::runtime::sim::load_scenario_file("examples/sim/hung_node.scenario");
//   strom::runtime::sim::run_options options;
//   options.seed = 7;
//   auto result = strom::runtime::sim::run_scenario(*scenario, options);
//   // result->passed, result->trace_sha256, strom::runtime::sim::to_json(*result)

//
// A host that uses a trained model loads a checkpoint that `strom train` saved and predicts on
// its own buffers, given as the job's data files hold them (the job's preprocessing is
// applied):
//
//   auto model = strom::runtime::trained_model::load("checkpoints/fashion_mlp/run-1/best.ckpt");
//   auto probabilities = model->predict(pixels, count);  // count * model->classes() floats
//   auto classes = model->classify(pixels, count);
#include "strom/runtime/embedded_runtime.hpp"
#include "strom/runtime/cluster/job_client.hpp"
#include "strom/runtime/job/job_spec.hpp"
#include "strom/runtime/kv_client.hpp"
#include "strom/runtime/kv_store.hpp"
#include "strom/runtime/job/local_training.hpp"
#include "strom/runtime/job/metrics_report.hpp"
#include "strom/runtime/node/node_daemon.hpp"
#include "strom/runtime/security/tls_context.hpp"
#include "strom/runtime/sim/run_scenario.hpp"
#include "strom/runtime/system_config.hpp"
#include "strom/runtime/trained_model.hpp"
#include "strom/runtime/job/training_progress.hpp"
