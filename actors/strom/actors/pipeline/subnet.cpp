#include "strom/actors/pipeline/subnet.hpp"
#include "strom/actors/pipeline/subnet_steps.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "strom/actors/worker/compute_slowdown.hpp"
#include "strom/actors/errors.hpp"
#include "strom/compute/codecs/dense_codec.hpp"
#include "strom/compute/data/partition.hpp"
#include "strom/compute/layers/softmax_cross_entropy.hpp"
#include "strom/compute/parameter_blocks.hpp"
#include "strom/compute/snapshots/snapshot_encoding.hpp"
#include "strom/log.hpp"

namespace strom::actors {

micro_batch_rows micro_batch_of(std::uint32_t samples, std::uint32_t count,
                                std::uint32_t index) {
  const auto base = samples / count;
  const auto extra = samples % count;
  return {index * base + std::min(index, extra), base + (index < extra ? 1 : 0)};
}

namespace {

using subnet_steps::self_ptr;
using subnet_steps::await_snapshot;
using subnet_steps::first_snapshot;
using subnet_steps::go_back;
using subnet_steps::send_copy;
using subnet_steps::send_snapshot;
using subnet_steps::state_now;
using subnet_steps::take_snapshot;

/// Runs `computation`, counts its time as busy and waits after it as the node's speed factor
/// asks (blocking, as a slower machine would, a thread of the node's scheduler).
template <class Computation>
void timed(self_ptr self, const subnet_setup& setup, Computation&& computation) {
  const auto start = self->clock().now();
  computation();
  const auto computed = self->clock().now() - start;
  if (const double speed = setup.speed.at(setup.replica->core().epoch()); speed < full_speed)
    std::this_thread::sleep_for(slowdown_wait(speed, computed));
  self->state.busy_seconds +=
    std::chrono::duration<double>(self->clock().now() - start).count();
}

/// `values` as a dense fp32 update frame; the stage's own frame always builds.
compute::frame frame_of(self_ptr self, const subnet_setup& setup,
                        std::span<const float> values) {
  compute::frame_header header;
  header.origin_node = setup.stage;
  header.sequence = self->state.step;
  header.iteration = self->state.step;
  header.epoch = self->state.epoch;
  auto built = compute::build_update_frame(header, compute::dense_fp32_update(values));
  if (!built)
    throw std::logic_error("subnet: its own frame does not build: " + built.err().message);
  self->state.sent_bytes += built->size();
  return std::move(built).value();
}

/// Decodes a neighbour's frame of `rows` x `width` floats into `target`; false (and the
/// subnet ends with the reason) when it does not fit.
bool decode_into(self_ptr self, const subnet_setup& setup, const compute::frame& f,
                 std::size_t rows, std::size_t width, std::span<float> target,
                 const char* what) {
  auto fail = [&](const std::string& why) {
    self->quit(make_error(strom_error::node_failed,
                          fmt::format("pipeline stage {} of job {}: {} of {} rows refused: {}",
                                      setup.stage + 1, setup.job_id, what, rows, why)));
    return false;
  };
  if (rows == 0 || rows > target.size() / std::max<std::size_t>(width, 1))
    return fail(fmt::format("{} rows do not fit a minibatch of {}", rows,
                            target.size() / std::max<std::size_t>(width, 1)));
  auto view = compute::read_update_frame(f, self->state.workspace);
  if (!view)
    return fail(view.err().message);
  if (view->enc != compute::encoding::dense_fp32 || view->header.offset != 0
      || view->elements != rows * width)
    return fail(fmt::format("a {} frame of {} elements at offset {}, expected dense_fp32 of {}",
                            compute::to_string(view->enc), view->elements, view->header.offset,
                            rows * width));
  auto slice = target.first(rows * width);
  std::fill(slice.begin(), slice.end(), 0.0f);
  if (auto ok = compute::apply_update_frame(*view, slice); !ok)
    return fail(ok.err().message);
  return true;
}

/// Where the stage keeps the micro-batches in flight (its replica reserved their rows).
compute::micro_batch_slots slots_of(const subnet_setup& setup) {
  return compute::slots_for(setup.replica->max_batch(), setup.micro_batches, setup.stages,
                            setup.schedule);
}

/// The flush of a stage with copies: its update applied and sent to the copies as a frame
/// (a header-only one when nothing reached the threshold, which still says the step is
/// done), then the copies' updates that arrived during the minibatch added (ping-pong).
void share_step(self_ptr self, const subnet_setup& setup) {
  auto& st = self->state;
  const auto sent = setup.replica->step_shared(*st.encoder);
  const auto elements = st.incoming.size();
  compute::frame_header header;
  header.origin_node = setup.pipeline;
  header.worker = setup.stage;
  header.sequence = st.step;
  header.iteration = st.epoch_step;
  header.epoch = st.epoch;
  auto built = compute::build_update_frame(
    header, sent ? *sent
                 : compute::encoded_update{compute::encoding::threshold,
                                           st.encoder->threshold(), elements, 0, {}});
  if (!built)
    throw std::logic_error("subnet: its own update frame does not build: " + built.err().message);
  for (const auto& copy : st.links.peers)
    if (copy)
      self->send(copy, stage_update{st.generation, *built});
  auto parameters = setup.replica->core().net().parameters();
  std::transform(parameters.begin(), parameters.end(), st.incoming.begin(), parameters.begin(),
                 [](float p, float u) { return p + u; });
  std::fill(st.incoming.begin(), st.incoming.end(), 0.0f);
}

/// Whether every copy has sent the updates of the epoch's minibatches before `step` but one.
bool copies_caught_up(const subnet_state& st, const subnet_setup& setup, std::uint64_t step) {
  if (step < 2)
    return true;
  for (std::uint32_t p = 0; p < st.copies.size(); ++p) {
    const auto& copy = st.copies[p];
    if (p == setup.pipeline || copy.epoch > st.epoch)
      continue;
    if (copy.epoch < st.epoch || copy.steps + 1 < step)
      return false;
  }
  return true;
}

/// Passes the epoch's end on with this stage's figures; the last stage adds the loss and
/// hands it to the job_master. The counters start again, and after training the stage's
/// epoch-based learning-rate schedule moves on.
void end_epoch(self_ptr self, const subnet_setup& setup, stage_epoch_end marker) {
  auto& st = self->state;
  const bool trained = !marker.evaluation;
  const stage_point next{marker.epoch + 1, 0};
  if (trained)
    setup.replica->core().finish_epoch();
  marker.generation = st.generation;
  marker.busy_seconds.push_back(st.busy_seconds);
  marker.activation_bytes.push_back(st.sent_bytes);
  st.busy_seconds = 0.0;
  st.sent_bytes = 0;
  if (setup.stage + 1 < setup.stages) {
    self->send(st.links.downstream, std::move(marker));
  } else {
    marker.steps = st.totals.steps;
    marker.samples = st.totals.samples;
    marker.loss_sum = st.totals.loss_sum;
    marker.correct = st.totals.correct;
    st.totals = {};
    self->send(st.links.master, std::move(marker));
  }
  // An epoch's end is where the next one starts: a loss during the evaluation goes back here.
  if (trained && setup.snapshot_every > 0)
    take_snapshot(self, setup, next);
}

/// The first stage: the minibatch's next micro-batch goes through its layers into its slot's
/// rows and downstream.
void forward_next(self_ptr self, const subnet_setup& setup) {
  auto& st = self->state;
  auto& stage = *setup.replica;
  const auto& minibatch = *st.minibatch;
  const auto samples = static_cast<std::uint32_t>(minibatch.size);
  const auto m = st.forwarded++;
  const auto part = micro_batch_of(samples, st.step_micro, m);
  const auto first_row = slots_of(setup).first_row(m);
  const auto width = stage.input_width();
  std::copy_n(minibatch.features.begin() + static_cast<std::ptrdiff_t>(part.first * width),
              part.rows * width, stage.input_rows(first_row, part.rows).begin());
  stage_forward out;
  timed(self, setup, [&] {
    out.activations = frame_of(self, setup, stage.forward(first_row, part.rows));
  });
  out.generation = st.generation;
  out.epoch = st.epoch;
  out.epoch_step = st.epoch_step;
  out.step = st.step;
  out.first_row = static_cast<std::uint32_t>(first_row);
  out.rows = part.rows;
  out.minibatch_samples = samples;
  out.micro_batches = st.step_micro;
  out.labels.assign(minibatch.labels.begin() + part.first,
                    minibatch.labels.begin() + part.first + part.rows);
  self->send(st.links.downstream, std::move(out));
}

/// The first stage: the next minibatch's micro-batches go downstream, or the epoch ends.
void start_step(self_ptr self, const subnet_setup& setup) {
  auto& st = self->state;
  // The epoch's end waits for no copy: the job_master waits for every copy's.
  st.waiting_for_copies =
    !st.loader->exhausted() && !copies_caught_up(st, setup, st.next_epoch_step);
  if (st.waiting_for_copies)
    return;
  const auto* next = st.loader->next();
  if (!next) {
    stage_epoch_end marker;
    marker.epoch = st.epoch;
    return end_epoch(self, setup, std::move(marker));
  }
  const auto samples = static_cast<std::uint32_t>(next->size);
  st.minibatch = next;
  st.step_micro = std::min(setup.micro_batches, samples);
  st.step_done = st.forwarded = 0;
  st.epoch_step = st.next_epoch_step++;
  // As many forwards as the schedule keeps in flight; each backward back lets one more go.
  const auto in_flight = std::min(st.step_micro, slots_of(setup).slots);
  while (st.forwarded < in_flight)
    forward_next(self, setup);
}

/// The first stage: the test set goes downstream batch by batch, then the marker.
void run_evaluation(self_ptr self, const subnet_setup& setup, std::uint32_t epoch) {
  auto& st = self->state;
  if (setup.test) {
    const auto& test = *setup.test;
    // In batches of the rows the stages compute at once (their micro-batch slots).
    compute::batch_loader loader{test, compute::epoch_order({0, test.size()}, 0, 0, false),
                                 setup.replica->rows()};
    while (const auto* b = loader.next()) {
      stage_forward out;
      timed(self, setup, [&] {
        out.activations = frame_of(self, setup, setup.replica->predict(b->features, b->size));
      });
      out.generation = st.generation;
      out.rows = out.minibatch_samples = static_cast<std::uint32_t>(b->size);
      out.micro_batches = 1;
      out.evaluation = true;
      out.labels.assign(b->labels.begin(), b->labels.end());
      self->send(st.links.downstream, std::move(out));
    }
  }
  stage_epoch_end marker;
  marker.epoch = epoch;
  marker.evaluation = true;
  end_epoch(self, setup, std::move(marker));
}

/// A stage past the first: an evaluation batch goes through its layers.
void evaluate_forward(self_ptr self, const subnet_setup& setup, stage_forward& in) {
  auto& st = self->state;
  auto& stage = *setup.replica;
  if (!decode_into(self, setup, in.activations, in.rows, stage.input_width(),
                   stage.input_rows(0, stage.rows()), "an evaluation batch"))
    return;
  if (stage.last()) {
    if (in.labels.size() != in.rows) {
      self->quit(make_error(strom_error::node_failed,
                            fmt::format("pipeline stage {}: {} labels for {} evaluation rows",
                                        setup.stage + 1, in.labels.size(), in.rows)));
      return;
    }
    timed(self, setup, [&] {
      auto logits = stage.predict(stage.input_rows(0, in.rows), in.rows);
      const auto classes = stage.output_width();
      st.totals.loss_sum += static_cast<double>(compute::softmax_cross_entropy(
                              logits, in.labels, in.rows, classes, {}))
                            * in.rows;
      st.totals.correct += compute::count_correct(logits, in.labels, in.rows, classes);
      st.totals.samples += in.rows;
    });
    return;
  }
  timed(self, setup, [&] {
    in.activations =
      frame_of(self, setup, stage.predict(stage.input_rows(0, in.rows), in.rows));
  });
  self->send(st.links.downstream, std::move(in));
}

/// A micro-batch's backward is done on this stage: after the minibatch's last, the flush.
void micro_batch_done(self_ptr self, const subnet_setup& setup) {
  auto& st = self->state;
  if (++st.step_done < st.step_micro) {
    if (setup.stage == 0 && st.forwarded < st.step_micro)
      forward_next(self, setup);
    return;
  }
  st.step_done = 0;
  timed(self, setup, [&] {
    if (st.encoder)
      share_step(self, setup);
    else
      setup.replica->step();
  });
  ++st.step;
  if (setup.snapshot_every > 0 && st.step % setup.snapshot_every == 0)
    timed(self, setup, [&] { take_snapshot(self, setup, {st.epoch, st.epoch_step + 1}); });
  if (setup.stage == 0)
    start_step(self, setup);
}

/// A stage past the first: a training micro-batch goes through its layers; the last stage
/// runs the loss and the backward at once.
void train_forward(self_ptr self, const subnet_setup& setup, stage_forward& in) {
  auto& st = self->state;
  auto& stage = *setup.replica;
  if (in.first_row > stage.rows() || in.rows > stage.rows() - in.first_row
      || in.minibatch_samples > stage.max_batch() || in.rows > in.minibatch_samples) {
    self->quit(make_error(strom_error::node_failed,
                          fmt::format("pipeline stage {}: micro-batch rows [{}, +{}) of a "
                                      "minibatch of {} do not fit its {} rows or a minibatch "
                                      "of at most {}", setup.stage + 1, in.first_row, in.rows,
                                      in.minibatch_samples, stage.rows(), stage.max_batch())));
    return;
  }
  if (!decode_into(self, setup, in.activations, in.rows, stage.input_width(),
                   stage.input_rows(in.first_row, stage.rows() - in.first_row),
                   "a micro-batch"))
    return;
  st.step_micro = in.micro_batches;
  st.epoch = in.epoch;
  st.epoch_step = in.epoch_step;
  first_snapshot(self, setup);
  if (!stage.last()) {
    timed(self, setup, [&] {
      in.activations = frame_of(self, setup, stage.forward(in.first_row, in.rows));
    });
    return self->send(st.links.downstream, std::move(in));
  }
  if (in.labels.size() != in.rows) {
    self->quit(make_error(strom_error::node_failed,
                          fmt::format("pipeline stage {}: {} labels for {} rows",
                                      setup.stage + 1, in.labels.size(), in.rows)));
    return;
  }
  stage_backward back{st.generation, in.step, in.first_row, in.rows, {}};
  timed(self, setup, [&] {
    auto gradient = std::span{st.input_gradient}.first(in.rows * stage.input_width());
    const auto measured =
      stage.forward_backward(in.first_row, in.rows, in.labels, in.minibatch_samples, gradient);
    st.step_loss += static_cast<double>(measured.loss) * in.rows / in.minibatch_samples;
    back.gradient = frame_of(self, setup, gradient);
  });
  self->send(st.links.upstream, std::move(back));
  if (st.step_done + 1 == st.step_micro) {
    st.totals.loss_sum += st.step_loss;
    st.totals.samples += in.minibatch_samples;
    ++st.totals.steps;
    st.step_loss = 0.0;
  }
  micro_batch_done(self, setup);
}

/// A stage before the last: the gradient of one micro-batch's output goes through its layers.
void train_backward(self_ptr self, const subnet_setup& setup, const stage_backward& in) {
  auto& st = self->state;
  auto& stage = *setup.replica;
  if (in.first_row > stage.rows() || in.rows > stage.rows() - in.first_row) {
    self->quit(make_error(strom_error::node_failed,
                          fmt::format("pipeline stage {}: gradient rows [{}, +{}) outside its "
                                      "{} rows", setup.stage + 1, in.first_row, in.rows,
                                      stage.rows())));
    return;
  }
  if (!decode_into(self, setup, in.gradient, in.rows, stage.output_width(), st.received,
                   "a gradient"))
    return;
  stage_backward back{st.generation, in.step, in.first_row, in.rows, {}};
  timed(self, setup, [&] {
    auto gradient = std::span{st.input_gradient}.first(in.rows * stage.input_width());
    stage.backward(in.first_row, in.rows,
                   std::span<const float>{st.received}.first(in.rows * stage.output_width()),
                   gradient);
    if (!stage.first())
      back.gradient = frame_of(self, setup, gradient);
  });
  if (!stage.first())
    self->send(st.links.upstream, std::move(back));
  micro_batch_done(self, setup);
}

/// A copy's update: checked against the copy that sent it (anything else is dropped with a
/// warning: a node never ends on what a peer sends), added to the incoming buffer; a first
/// stage waiting for it goes on.
void take_update(self_ptr self, const subnet_setup& setup, const stage_update& in) {
  auto& st = self->state;
  const auto& copies = st.links.peers;
  const auto sender = self->current_sender();
  const auto from = std::find_if(copies.begin(), copies.end(),
                                 [&](const caf::actor& c) { return c && c.address() == sender; });
  auto refuse = [&](const std::string& why) {
    log::warning("pipeline stage {} of job {}: an update refused: {}", setup.stage + 1,
                 setup.job_id, why);
  };
  if (!st.encoder || from == copies.end())
    return refuse("not from a copy of the stage");
  const auto copy = static_cast<std::uint32_t>(from - copies.begin());
  auto view = compute::read_update_frame(in.update, st.workspace);
  if (!view)
    return refuse(view.err().message);
  if (view->header.origin_node != copy || view->header.offset != 0
      || view->elements != st.incoming.size())
    return refuse(fmt::format("copy {} sent a frame of copy {} for {} elements at offset {}, "
                              "expected {} at 0", copy, view->header.origin_node,
                              view->elements, view->header.offset, st.incoming.size()));
  if (auto ok = compute::apply_update_frame(*view, st.incoming); !ok)
    return refuse(ok.err().message);
  auto& progress = st.copies[copy];
  if (view->header.epoch >= progress.epoch)
    progress = {view->header.epoch,
                std::max(view->header.epoch == progress.epoch ? progress.steps : 0,
                         view->header.iteration + 1)};
  if (st.waiting_for_copies && copies_caught_up(st, setup, st.next_epoch_step))
    start_step(self, setup);
}

/// None when the message in hand (`what`) comes from the stage's job_master; else the error
/// a request is answered with, and a warning naming it.
caf::error not_from_master(self_ptr self, const subnet_setup& setup, const char* what) {
  if (self->current_sender() == setup.master)
    return caf::none;
  log::warning("pipeline stage {} of job {}: a {} not from its job_master refused",
               setup.stage + 1, setup.job_id, what);
  return make_error(strom_error::not_permitted,
                    fmt::format("pipeline stage {} of job {} takes a {} only from its "
                                "job_master", setup.stage + 1, setup.job_id, what));
}

/// Calls `then` with snapshot `sent` of `source` decoded, once all its chunks are in; `failed`
/// with the reason it did not arrive whole or does not decode.
void await_decoded(self_ptr self, const subnet_setup& setup, const caf::actor& source,
                   const snapshot_sent& sent,
                   std::function<void(compute::replica_snapshot)> then,
                   std::function<void(caf::error)> failed) {
  await_snapshot(self, setup, source.address(), sent.snapshot_id,
                 [then, failed](result<compute::frame> encoded) {
    auto saved = encoded ? compute::decode_snapshot(encoded->words())
                         : result<compute::replica_snapshot>{encoded.err()};
    if (!saved)
      return failed(make_error(strom_error::snapshot_failed, saved.err().message));
    then(std::move(*saved));
  });
}

/// Subnets' states being gathered (a refill's, a checkpoint's), in the order asked for.
struct gathered_states {
  std::vector<std::optional<compute::replica_snapshot>> received;
  std::size_t left = 0;
  std::function<void(std::vector<compute::replica_snapshot>)> done;
  std::function<void(caf::error)> failed;

  void arrived(std::size_t i, compute::replica_snapshot saved) {
    received[i] = std::move(saved);
    if (--left > 0)
      return;
    std::vector<compute::replica_snapshot> all;
    for (auto& one : received)
      all.push_back(std::move(*one));
    done(std::move(all));
  }
  void fail(caf::error err) {
    if (std::exchange(left, 0) > 0)  // the first error answers; later answers find none left
      failed(std::move(err));
  }
};

/// Asks each of `sources` (of generation `generation`; this subnet itself answers directly)
/// for its state as it is now: `done` gets them in order once all arrived, `failed` the
/// first error.
void gather_states(self_ptr self, const subnet_setup& setup,
                   const std::vector<caf::actor>& sources, std::uint32_t generation,
                   std::function<void(std::vector<compute::replica_snapshot>)> done,
                   std::function<void(caf::error)> failed) {
  auto gathered = std::make_shared<gathered_states>();
  gathered->received.resize(sources.size());
  gathered->left = sources.size();
  gathered->done = std::move(done);
  gathered->failed = std::move(failed);
  if (sources.empty())
    return gathered->done({});
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto source = sources[i];
    if (source.address() == self->address()) {
      gathered->arrived(i, state_now(self, setup, self->state.epoch_step));
      continue;
    }
    self->request(source, setup.snapshot_timeout,
                  stage_state_fetch{generation, setup.fetch_token})
      .then(
        [self, setup, gathered, source, i](const snapshot_sent& sent) {
          await_decoded(
            self, setup, source, sent,
            [gathered, i](compute::replica_snapshot saved) {
              if (gathered->left > 0)  // else an error was answered already
                gathered->arrived(i, std::move(saved));
            },
            [gathered](caf::error err) { gathered->fail(std::move(err)); });
        },
        [gathered](caf::error& err) { gathered->fail(std::move(err)); });
  }
}

/// `received` with each one's layer range [first_layers[i], end_layers[i]); an error when the
/// bounds given do not match the states.
result<std::vector<compute::stage_source>> sources_of(
  const std::vector<compute::replica_snapshot>& received,
  const std::vector<std::uint32_t>& first_layers, const std::vector<std::uint32_t>& end_layers) {
  if (first_layers.size() != received.size() || end_layers.size() != received.size())
    return error{fmt::format("{} sources with {} and {} layer bounds", received.size(),
                             first_layers.size(), end_layers.size())};
  std::vector<compute::stage_source> sources;
  for (std::size_t i = 0; i < received.size(); ++i)
    sources.push_back({{first_layers[i], end_layers[i]}, &received[i]});
  return sources;
}

/// Every old subnet's state arrived: the stage's own put together from them and taken up.
caf::error take_refill(self_ptr self, const subnet_setup& setup, const stage_refill& request,
                       const std::vector<compute::replica_snapshot>& received) {
  auto& st = self->state;
  auto sources = sources_of(received, request.first_layers, request.end_layers);
  if (!sources)
    return make_error(strom_error::bad_job, fmt::format("pipeline stage {}: {}", setup.stage + 1,
                                                        sources.err().message));
  const auto range = setup.replica->range();
  auto regrouped = compute::regroup_stage(setup.network_layers, range, *sources);
  if (!regrouped)
    return make_error(strom_error::snapshot_failed,
                      fmt::format("pipeline stage {} of job {}: its layers' state: {}",
                                  setup.stage + 1, setup.job_id, regrouped.err().message));
  auto to = request.to;
  to.step = regrouped->progress.iteration;  // a minibatch is one updater step on every stage
  to.snapshot_id = ++st.snapshots_taken;
  if (auto err = go_back(self, setup, to, *regrouped))
    return err;
  // Its first snapshot, for a rollback; the holder gets a copy once the stages are linked.
  st.snapshots.keep_own(
    {to, std::make_shared<const compute::replica_snapshot>(std::move(*regrouped))});
  st.copy_to_send = to;
  return caf::none;
}

/// Asks every old subnet of `refill` for its state; answers `promise` once the stage took its
/// own from them (or with the first error).
void start_refill(self_ptr self, const subnet_setup& setup, const stage_refill& refill,
                  caf::typed_response_promise<std::uint64_t> promise) {
  gather_states(
    self, setup, refill.sources, refill.generation,
    [self, setup, refill, promise](std::vector<compute::replica_snapshot> received) mutable {
      if (auto err = take_refill(self, setup, refill, received))
        promise.deliver(std::move(err));
      else
        promise.deliver(std::uint64_t{0});
    },
    [promise](caf::error err) mutable { promise.deliver(std::move(err)); });
}

/// Every stage's state, put together into the whole network's: saved by the runtime in the
/// run's folder (if any; the path, else empty), and kept for the job's keeper (if any).
result<std::string> save_network(self_ptr self, const subnet_setup& setup,
                                 const stage_checkpoint& request,
                                 const std::vector<compute::replica_snapshot>& received) {
  auto sources = sources_of(received, request.first_layers, request.end_layers);
  if (!sources)
    return sources.err();
  const compute::layer_range all{0, static_cast<std::uint32_t>(setup.network_layers.size())};
  auto network = compute::regroup_stage(setup.network_layers, all, *sources);
  if (!network)
    return error{fmt::format("the network's state: {}", network.err().message)};
  auto& st = self->state;
  st.kept_network.reset();
  st.kept_for = request.keeper.address();
  if (request.keeper)
    st.kept_network = std::make_shared<const kj::Array<capnp::word>>(
      compute::encode_snapshot(*network));
  if (request.folder.empty())
    return std::string{};
  return setup.save_checkpoint(*network, request);
}

/// Gathers every stage's state (its own included) and answers `promise` with the path of the
/// checkpoint saved from them (or with the first error).
void start_checkpoint(self_ptr self, const subnet_setup& setup, const stage_checkpoint& request,
                      caf::typed_response_promise<std::string> promise) {
  if (!setup.save_checkpoint) {
    promise.deliver(make_error(strom_error::bad_job,
                               fmt::format("pipeline stage {} of job {} saves no checkpoints",
                                           setup.stage + 1, setup.job_id)));
    return;
  }
  gather_states(
    self, setup, request.sources, request.generation,
    [self, setup, request, promise](std::vector<compute::replica_snapshot> received) mutable {
      auto path = save_network(self, setup, request, received);
      if (path)
        promise.deliver(std::move(*path));
      else
        promise.deliver(make_error(strom_error::snapshot_failed,
                                   fmt::format("pipeline of job {}: {}", setup.job_id,
                                               path.err().message)));
    },
    [promise](caf::error err) mutable { promise.deliver(std::move(err)); });
}

} // namespace

caf::behavior subnet(caf::stateful_actor<subnet_state>* self, subnet_setup setup) {
  auto& st = self->state;
  const auto& stage = *setup.replica;
  if (const auto needed = slots_of(setup).rows(); needed > stage.rows()) {
    self->quit(make_error(strom_error::bad_job,
                          fmt::format("pipeline stage {}: {} rows reserved, and its micro-batch "
                                      "slots need {}", setup.stage + 1, stage.rows(), needed)));
    return {};
  }
  st.received.assign(stage.output_width() * stage.rows(), 0.0f);
  st.input_gradient.assign(stage.input_width() * stage.rows(), 0.0f);
  st.generation = setup.generation;
  st.snapshots = stage_snapshots{setup.snapshot_bytes};
  if (setup.pipelines > 1) {
    const auto elements = stage.core().net().parameters().size();
    auto sharing = setup.sharing;
    sharing.blocks = compute::parameter_blocks(stage.core().net());
    st.encoder.emplace(elements, std::move(sharing));
    st.incoming.assign(elements, 0.0f);
    st.copies.assign(setup.pipelines, {});
  }
  const auto sender_of = [self] { return caf::actor_cast<caf::actor_addr>(self->current_sender()); };
  return {
    [self, setup](const stage_links& links) -> caf::result<wired_atom> {
      if (auto refused = not_from_master(self, setup, "stage_links"))
        return refused;
      auto& st = self->state;
      st.links = links;
      st.generation = links.generation;
      if (st.copy_to_send) {  // the holder that kept it was lost: the new one gets a copy
        if (const auto* kept = st.snapshots.own(st.copy_to_send->at))
          send_copy(self, setup, *kept);
        st.copy_to_send.reset();
      }
      return wired_atom_v;
    },
    [self, setup](const stage_run& run) {
      auto& st = self->state;
      if (setup.stage != 0 || !setup.train || run.generation != st.generation
          || not_from_master(self, setup, "stage_run"))
        return;
      if (run.evaluation)
        return run_evaluation(self, setup, run.epoch);
      st.epoch = run.epoch;
      auto order =
        compute::epoch_order({0, setup.train->size()}, setup.seed, run.epoch, setup.shuffle);
      if (setup.pipelines > 1) {  // copy r trains the r-th share of the epoch's order
        const auto share = compute::partition(order.size(), setup.pipeline, setup.pipelines);
        order = {order.begin() + static_cast<std::ptrdiff_t>(share.begin),
                 order.begin() + static_cast<std::ptrdiff_t>(share.end)};
      }
      // A restored pipeline goes on after the minibatches its snapshot holds.
      const auto done = std::min<std::size_t>(run.from_step * setup.replica->max_batch(),
                                              order.size());
      order.erase(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(done));
      st.next_epoch_step = run.from_step;
      if (!st.loader)
        st.loader = std::make_unique<compute::batch_loader>(*setup.train, std::move(order),
                                                            setup.replica->max_batch());
      else
        st.loader->reset(std::move(order));
      first_snapshot(self, setup);
      start_step(self, setup);
    },
    [self, setup](stage_forward& in) {
      if (setup.stage == 0 || in.generation != self->state.generation)
        return;
      if (in.evaluation)
        evaluate_forward(self, setup, in);
      else
        train_forward(self, setup, in);
    },
    [self, setup](const stage_update& in) {
      if (in.generation == self->state.generation)
        take_update(self, setup, in);
    },
    [self, setup](const stage_backward& in) {
      if (setup.replica->last() || in.generation != self->state.generation)
        return;
      train_backward(self, setup, in);
    },
    [self, setup](stage_epoch_end& marker) {
      if (setup.stage == 0 || marker.generation != self->state.generation)
        return;
      self->state.epoch = marker.epoch;
      end_epoch(self, setup, std::move(marker));
    },
    [self, setup, sender_of](const snapshot_chunk& chunk) {
      if (auto ok = self->state.snapshots.add_chunk(sender_of(), chunk.value); !ok)
        log::warning("pipeline stage {} of job {}: a snapshot chunk refused: {}", setup.stage + 1,
                  setup.job_id, ok.err().message);
    },
    [self, setup, sender_of](const stage_snapshot_note& note) {
      await_snapshot(self, setup, sender_of(), note.snapshot_id,
                     [self, setup, note](result<compute::frame> encoded) {
        if (!encoded) {  // the holder never confirms it: a restore goes back further
          log::warning("pipeline stage {} of job {}: the snapshot of stage {} at epoch {} step {}: "
                       "{}", setup.stage + 1, setup.job_id, note.stage + 1, note.at.epoch + 1,
                       note.at.epoch_step, encoded.err().message);
          return;
        }
        auto& st = self->state;
        st.snapshots.hold(note, std::move(*encoded));
        self->send(st.links.master, note);
      });
    },
    [self](caf::timeout_atom, snapshot_atom, const caf::actor_addr& source, std::uint64_t id) {
      self->state.snapshots.give_up(source, id);
    },
    [self, setup](const stage_snapshot_fetch& fetch) -> caf::result<snapshot_sent> {
      auto& st = self->state;
      const auto* copy = st.snapshots.held(fetch.stage, fetch.at);
      if (!copy)
        return make_error(strom_error::snapshot_failed,
                          fmt::format("pipeline stage {} holds no snapshot of stage {} at "
                                      "epoch {} step {}", setup.stage + 1, fetch.stage + 1,
                                      fetch.at.epoch + 1, fetch.at.epoch_step));
      return send_snapshot(self, caf::actor_cast<caf::actor>(self->current_sender()),
                           copy->words(), ++st.snapshots_taken);
    },
    [self, setup](const stage_rollback& back) -> caf::result<std::uint64_t> {
      if (auto refused = not_from_master(self, setup, "stage_rollback"))
        return refused;
      auto& st = self->state;
      // A stage that never trained yet (it takes its first snapshot at its first input)
      // still holds the model it was spawned with: that is the epoch's start.
      if (!st.snapshots.keeps_own() && back.to.at.epoch_step == 0)
        take_snapshot(self, setup, back.to.at);
      const auto* kept = st.snapshots.own(back.to.at);
      if (!kept)
        return make_error(strom_error::snapshot_failed,
                          fmt::format("pipeline stage {} of job {} keeps no snapshot of epoch "
                                      "{} step {}", setup.stage + 1, setup.job_id,
                                      back.to.at.epoch + 1, back.to.at.epoch_step));
      const auto undone = st.step - std::min(st.step, kept->note.step);
      auto to = back.to;
      to.step = kept->note.step;
      if (auto err = go_back(self, setup, to, *kept->saved))
        return err;
      st.generation = back.generation;
      if (back.send_copy)
        st.copy_to_send = kept->note;
      return undone;
    },
    [self, setup](const stage_state_fetch& fetch) -> caf::result<snapshot_sent> {
      auto& st = self->state;
      if (fetch.token != setup.fetch_token) {
        log::warning("pipeline stage {} of job {}: a state fetch without the pipeline's token "
                     "refused", setup.stage + 1, setup.job_id);
        return make_error(strom_error::not_permitted,
                          fmt::format("pipeline stage {} of job {} gives its state only to its "
                                      "pipeline's stages", setup.stage + 1, setup.job_id));
      }
      if (fetch.generation != st.generation)
        return make_error(strom_error::snapshot_failed,
                          fmt::format("pipeline stage {} of job {} runs generation {}, not {}",
                                      setup.stage + 1, setup.job_id, st.generation,
                                      fetch.generation));
      const auto encoded = compute::encode_snapshot(state_now(self, setup, st.epoch_step));
      return send_snapshot(self, caf::actor_cast<caf::actor>(self->current_sender()),
                           {encoded.begin(), encoded.size()}, ++st.snapshots_taken);
    },
    [self, setup](const stage_checkpoint& request) -> caf::result<std::string> {
      if (auto refused = not_from_master(self, setup, "stage_checkpoint"))
        return refused;
      auto promise = self->make_response_promise<std::string>();
      start_checkpoint(self, setup, request, promise);
      return promise;
    },
    [self, setup](snapshot_atom, std::uint64_t job_id,
                  const caf::actor& receiver) -> caf::result<snapshot_sent> {
      auto& st = self->state;
      if (self->current_sender() != st.kept_for || job_id != setup.job_id || !st.kept_network)
        return make_error(strom_error::not_permitted,
                          fmt::format("pipeline stage {} of job {} keeps no checkpoint for this "
                                      "sender", setup.stage + 1, setup.job_id));
      const auto& encoded = *st.kept_network;
      return send_snapshot(self, receiver, {encoded.begin(), encoded.size()},
                           ++st.snapshots_taken);
    },
    [self, setup](const stage_refill& refill) -> caf::result<std::uint64_t> {
      if (auto refused = not_from_master(self, setup, "stage_refill"))
        return refused;
      auto promise = self->make_response_promise<std::uint64_t>();
      start_refill(self, setup, refill, promise);
      return promise;
    },
    [self, setup](const stage_restore& restore) -> caf::result<std::uint64_t> {
      if (auto refused = not_from_master(self, setup, "stage_restore"))
        return refused;
      auto promise = self->make_response_promise<std::uint64_t>();
      const auto holder = restore.holder;
      const auto to = restore.to;
      self
        ->request(holder, setup.snapshot_timeout, stage_snapshot_fetch{to.stage, to.at})
        .then(
          [self, setup, promise, holder, to](const snapshot_sent& sent) mutable {
            await_decoded(
              self, setup, holder, sent,
              [self, setup, promise, to](compute::replica_snapshot saved) mutable {
                if (auto err = go_back(self, setup, to, saved)) {
                  promise.deliver(std::move(err));
                  return;
                }
                // For a later rollback.
                self->state.snapshots.keep_own(
                  {to, std::make_shared<const compute::replica_snapshot>(std::move(saved))});
                promise.deliver(std::uint64_t{0});
              },
              [promise](caf::error err) mutable { promise.deliver(std::move(err)); });
          },
          [promise](caf::error& err) mutable { promise.deliver(std::move(err)); });
      return promise;
    },
  };
}

} // namespace strom::actors
