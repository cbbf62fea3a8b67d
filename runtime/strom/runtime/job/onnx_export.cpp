#include "strom/runtime/job/onnx_export.hpp"

#include <climits>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "strom/compute/layers/activation.hpp"
#include "strom/compute/layers/batch_normalization.hpp"
#include "strom/compute/layers/convolution.hpp"
#include "strom/compute/layers/dense.hpp"
#include "strom/compute/layers/dropout.hpp"
#include "strom/compute/layers/pooling.hpp"
#include "strom/runtime/job/atomic_file.hpp"

namespace strom::runtime {

namespace {

/// IR version 7 (ONNX 1.8) is the first that carries opset 13. A reader refuses an IR newer
/// than its own, and IR 8 (ONNX 1.10) would gain nothing this graph uses.
constexpr std::int64_t onnx_ir_version = onnx::IR_VERSION_2020_5_8;

/// protobuf refuses to serialise or parse a message of 2 GiB or more.
constexpr std::size_t max_onnx_bytes = INT_MAX;

/// The name of the batch dimension, left open so that a consumer feeds any number of samples.
constexpr const char* batch_dim = "N";

/// A tensor flowing through the graph: [N][size] (flat) or [N][C][H][W], strom's `shape`
/// of one sample either way.
struct flowing_tensor {
  std::string name;
  compute::shape sample;
  bool flat = false;
};

/// Whether an input of `s` is a vector of features (at most one dimension above 1) rather
/// than an image: a CSV job's input is (width = F), Fashion-MNIST's 1 x 28 x 28.
bool is_vector(compute::shape s) {
  return (s.channels > 1) + (s.height > 1) + (s.width > 1) <= 1;
}

std::vector<std::int64_t> dims_of(compute::shape s, bool flat) {
  if (flat)
    return {static_cast<std::int64_t>(s.size())};
  return {static_cast<std::int64_t>(s.channels), static_cast<std::int64_t>(s.height),
          static_cast<std::int64_t>(s.width)};
}

/// Builds one graph node by node; every name it makes is unique because each carries the
/// index of the layer (or the preprocessing step) it comes from.
class graph_writer {
public:
  explicit graph_writer(onnx::GraphProto& graph) : graph_(graph) {}

  /// A float initializer named `name` of `dims` holding `values`; returns its name.
  std::string floats(std::string name, const std::vector<std::int64_t>& dims,
                     std::span<const float> values) {
    auto* tensor = graph_.add_initializer();
    tensor->set_name(std::move(name));
    tensor->set_data_type(onnx::TensorProto::FLOAT);
    for (const auto d : dims)
      tensor->add_dims(d);
    tensor->mutable_float_data()->Add(values.begin(), values.end());
    return tensor->name();
  }

  /// An int64 initializer (a Reshape's target shape).
  std::string integers(std::string name, std::span<const std::int64_t> values) {
    auto* tensor = graph_.add_initializer();
    tensor->set_name(std::move(name));
    tensor->set_data_type(onnx::TensorProto::INT64);
    tensor->add_dims(static_cast<std::int64_t>(values.size()));
    tensor->mutable_int64_data()->Add(values.begin(), values.end());
    return tensor->name();
  }

  /// A node `op` named `name` from `inputs` to one output of the same name.
  onnx::NodeProto& node(std::string_view op, const std::string& name,
                        std::initializer_list<std::string> inputs) {
    auto* n = graph_.add_node();
    n->set_op_type(std::string{op});
    n->set_name(name);
    for (const auto& in : inputs)
      n->add_input(in);
    n->add_output(name);
    return *n;
  }

  static void set(onnx::NodeProto& n, const char* name, std::int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }

  static void set(onnx::NodeProto& n, const char* name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }

  static void set(onnx::NodeProto& n, const char* name, std::initializer_list<std::int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (const auto x : v)
      a->add_ints(x);
  }

  /// Declares a graph input or output of float tensors [N, dims...].
  static void declare(onnx::ValueInfoProto& info, const std::string& name,
                      const std::vector<std::int64_t>& dims) {
    info.set_name(name);
    auto* tensor = info.mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = tensor->mutable_shape();
    shape->add_dim()->set_dim_param(batch_dim);
    for (const auto d : dims)
      shape->add_dim()->set_dim_value(d);
  }

private:
  onnx::GraphProto& graph_;
};

/// Writes the graph's nodes layer by layer, keeping the tensor that flows between them.
class network_writer {
public:
  network_writer(onnx::GraphProto& graph, const compute::model& net)
    : out_(graph), net_(net), current_{"input", net.input_shape(), is_vector(net.input_shape())} {}

  // -- preprocessing -----------------------------------------------------------------------

  /// x * scale, then (x - mean) * (1 / stddev), as job_preprocessing::apply computes it:
  /// the reciprocal too, taken per feature and 1 for a constant feature.
  result<void> preprocessing(const job_preprocessing& steps) {
    if (steps.scale() != 1.0f) {
      const float factor = steps.scale();
      const auto constant = out_.floats("preprocessing.scale.factor", {1}, {&factor, 1});
      advance(out_.node("Mul", "preprocessing.scale", {current_.name, constant}));
    }
    const auto& stats = steps.statistics();
    const std::size_t count = stats.mean.size();
    if (count == 0)
      return success();
    const std::size_t features = current_.sample.size();
    if (stats.stddev.size() != count || (count != 1 && count != features))
      return error{fmt::format("preprocessing: standardisation has {} means and {} deviations "
                               "for samples of {} features",
                               count, stats.stddev.size(), features)};
    std::vector<float> inverse(count);
    for (std::size_t i = 0; i < count; ++i)
      inverse[i] = stats.stddev[i] == 0.0f ? 1.0f : 1.0f / stats.stddev[i];
    // [1] for one global value; [C, H, W] or [F] per feature, broadcast over the batch.
    // Not [1, C, H, W]: OpenCV 4.6 takes a constant of the input's own shape for an
    // element-wise operand of one sample and refuses a batch of more.
    const auto dims = count == 1 ? std::vector<std::int64_t>{1}
                                 : dims_of(current_.sample, current_.flat);
    const auto mean = out_.floats("preprocessing.standardize.mean", dims, stats.mean);
    advance(out_.node("Sub", "preprocessing.standardize.subtract_mean", {current_.name, mean}));
    const auto factor = out_.floats("preprocessing.standardize.inverse_stddev", dims, inverse);
    advance(out_.node("Mul", "preprocessing.standardize.divide_by_stddev",
                      {current_.name, factor}));
    return success();
  }

  // -- the layers --------------------------------------------------------------------------

  result<void> layers() {
    const auto parameters = net_.parameters();
    const auto state = net_.state();
    for (std::size_t i = 0; i < net_.layers().size(); ++i) {
      const auto& l = *net_.layers()[i];
      const auto& slice = net_.slices()[i];
      const auto own = parameters.subspan(slice.parameter_offset, slice.parameter_count);
      const auto kept = state.subspan(slice.state_offset, slice.state_count);
      const std::string prefix = fmt::format("layers.{}.{}", i, l.kind());
      if (const auto* d = dynamic_cast<const compute::dense*>(&l))
        add_dense(prefix, *d, own);
      else if (const auto* c = dynamic_cast<const compute::convolution*>(&l))
        add_convolution(prefix, *c, own);
      else if (const auto* p = dynamic_cast<const compute::pooling*>(&l))
        add_pooling(prefix, *p);
      else if (const auto* b = dynamic_cast<const compute::batch_normalization*>(&l))
        add_batch_normalization(prefix, *b, own, kept);
      else if (const auto* a = dynamic_cast<const compute::activation*>(&l))
        add_activation(prefix, *a);
      else if (dynamic_cast<const compute::dropout*>(&l) != nullptr)
        continue;  // inference passes it through unchanged (inverted dropout)
      else
        return error{fmt::format("layer {} of the network ({}) has no ONNX form that strom "
                                 "can write; the network cannot be exported",
                                 i, l.kind())};
      current_.sample = l.output_shape();
    }
    return success();
  }

  /// The softmax over the logits, the graph's output.
  void probabilities() {
    auto& softmax = out_.node("Softmax", "probabilities", {current_.name});
    graph_writer::set(softmax, "axis", std::int64_t{1});
  }

private:
  void advance(const onnx::NodeProto& n) { current_.name = n.output(0); }

  /// Flattens [N][C][H][W] to [N][C*H*W], the order strom keeps a sample in.
  void make_flat(const std::string& prefix) {
    if (current_.flat)
      return;
    auto& flatten = out_.node("Flatten", prefix + ".flatten", {current_.name});
    graph_writer::set(flatten, "axis", std::int64_t{1});
    advance(flatten);
    current_.flat = true;
  }

  /// Reshapes [N][F] to [N][C][H][W] of the current sample shape.
  void make_spatial(const std::string& prefix) {
    if (!current_.flat)
      return;
    const auto dims = dims_of(current_.sample, false);
    const std::int64_t shape[] = {-1, dims[0], dims[1], dims[2]};
    const auto target = out_.integers(prefix + ".reshape.shape", shape);
    advance(out_.node("Reshape", prefix + ".reshape", {current_.name, target}));
    current_.flat = false;
  }

  /// Gemm(x, W, b) with transB: W is [units][inputs].
  void add_dense(const std::string& prefix, const compute::dense& d, std::span<const float> own) {
    make_flat(prefix);
    const auto units = static_cast<std::int64_t>(d.units());
    const auto inputs = static_cast<std::int64_t>(d.inputs());
    const std::size_t weights = d.units() * d.inputs();
    const auto w = out_.floats(prefix + ".weight", {units, inputs}, own.first(weights));
    const auto b = out_.floats(prefix + ".bias", {units}, own.subspan(weights, d.units()));
    auto& gemm = out_.node("Gemm", prefix, {current_.name, w, b});
    graph_writer::set(gemm, "transB", std::int64_t{1});
    advance(gemm);
  }

  /// Conv(x, W, b): W is [filters][channels][k][k], cross-correlation as strom computes it.
  void add_convolution(const std::string& prefix, const compute::convolution& c,
                       std::span<const float> own) {
    make_spatial(prefix);
    const auto& geometry = c.sliding_window();
    const auto filters = static_cast<std::int64_t>(c.output_shape().channels);
    const auto channels = static_cast<std::int64_t>(c.input_shape().channels);
    const auto k = static_cast<std::int64_t>(geometry.kernel);
    const std::size_t weights = static_cast<std::size_t>(filters * channels * k * k);
    const auto w = out_.floats(prefix + ".weight", {filters, channels, k, k}, own.first(weights));
    const auto b = out_.floats(prefix + ".bias", {filters},
                                own.subspan(weights, static_cast<std::size_t>(filters)));
    auto& conv = out_.node("Conv", prefix, {current_.name, w, b});
    set_window(conv, geometry);
    advance(conv);
  }

  /// MaxPool, or AveragePool dividing by the whole window as strom does: padded positions
  /// count as zeros. That is ONNX's count_include_pad, but OpenCV 4.6 ignores the attribute
  /// (it divided a corner of ones by 4 instead of 9), so the zeros are an explicit Pad and
  /// the average runs over the padded input, which every reader takes alike.
  void add_pooling(const std::string& prefix, const compute::pooling& p) {
    make_spatial(prefix);
    auto geometry = p.sliding_window();
    const bool average = p.reduction() == compute::pooling_kind::average;
    if (average && geometry.padding > 0) {
      const auto side = static_cast<std::int64_t>(geometry.padding);
      // Begins of N, C, H, W, then their ends.
      const std::int64_t pads[] = {0, 0, side, side, 0, 0, side, side};
      const auto amounts = out_.integers(prefix + ".pad.pads", pads);
      advance(out_.node("Pad", prefix + ".pad", {current_.name, amounts}));
      geometry.padding = 0;
    }
    auto& pool = out_.node(average ? "AveragePool" : "MaxPool", prefix, {current_.name});
    set_window(pool, geometry);
    advance(pool);
  }

  /// BatchNormalization in its inference form, from the running statistics (layer state).
  /// Statistics are per channel; a flat tensor stays flat only where each feature is a
  /// channel (after a dense layer), else it is reshaped so that ONNX's axis 1 is strom's.
  void add_batch_normalization(const std::string& prefix, const compute::batch_normalization& b,
                               std::span<const float> own, std::span<const float> kept) {
    if (current_.sample.height * current_.sample.width != 1)
      make_spatial(prefix);
    const std::size_t channels = current_.sample.channels;
    const auto c = static_cast<std::int64_t>(channels);
    const auto gamma = out_.floats(prefix + ".scale", {c}, own.first(channels));
    const auto beta = out_.floats(prefix + ".bias", {c}, own.subspan(channels, channels));
    const auto mean = out_.floats(prefix + ".running_mean", {c}, kept.first(channels));
    const auto var = out_.floats(prefix + ".running_var", {c}, kept.subspan(channels, channels));
    auto& norm = out_.node("BatchNormalization", prefix, {current_.name, gamma, beta, mean, var});
    graph_writer::set(norm, "epsilon", b.epsilon());
    advance(norm);
  }

  void add_activation(const std::string& prefix, const compute::activation& a) {
    switch (a.function()) {
      case compute::activation_kind::relu:
        advance(out_.node("Relu", prefix, {current_.name}));
        return;
      case compute::activation_kind::leaky_relu: {
        auto& leaky = out_.node("LeakyRelu", prefix, {current_.name});
        graph_writer::set(leaky, "alpha", a.alpha());
        advance(leaky);
        return;
      }
      case compute::activation_kind::tanh:
        advance(out_.node("Tanh", prefix, {current_.name}));
        return;
      case compute::activation_kind::sigmoid:
        advance(out_.node("Sigmoid", prefix, {current_.name}));
        return;
    }
  }

  /// kernel_shape, strides and pads of a square window, padded alike on every side; windows
  /// that would run past the padded input are dropped (ceil_mode 0), as strom does.
  static void set_window(onnx::NodeProto& n, const compute::window& w) {
    const auto k = static_cast<std::int64_t>(w.kernel);
    const auto s = static_cast<std::int64_t>(w.stride);
    const auto p = static_cast<std::int64_t>(w.padding);
    graph_writer::set(n, "kernel_shape", {k, k});
    graph_writer::set(n, "strides", {s, s});
    graph_writer::set(n, "pads", {p, p, p, p});
  }

  graph_writer out_;
  const compute::model& net_;
  flowing_tensor current_;
};

} // namespace

result<onnx_model> to_onnx(const compute::model& net, const job_preprocessing& preprocessing,
                           const std::string& name) {
  onnx::ModelProto model;
  model.set_ir_version(onnx_ir_version);
  model.set_producer_name("strom");
  model.set_doc_string(
    "A network trained by strom. Input: samples as the job's data files hold them (the job's "
    "preprocessing is the graph's first nodes). Output: the class probabilities.");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(onnx_opset);

  auto& graph = *model.mutable_graph();
  graph.set_name(name);
  const auto input = net.input_shape();
  const bool flat_input = is_vector(input);
  const auto input_dims = dims_of(input, flat_input);
  graph_writer::declare(*graph.add_input(), "input", input_dims);

  network_writer writer{graph, net};
  if (auto ok = writer.preprocessing(preprocessing); !ok)
    return ok.err();
  if (auto ok = writer.layers(); !ok)
    return ok.err();
  writer.probabilities();
  graph_writer::declare(*graph.add_output(), "probabilities",
                        {static_cast<std::int64_t>(net.classes())});

  const std::size_t size = model.ByteSizeLong();
  if (size > max_onnx_bytes)
    return error{fmt::format("the ONNX model would be {} bytes, more than the {} that protobuf "
                             "can write",
                             size, max_onnx_bytes)};
  onnx_model exported{{}, input_dims, net.classes(), static_cast<std::size_t>(graph.node_size())};
  if (!model.SerializeToString(&exported.bytes))
    return error{"the ONNX model could not be serialised (protobuf refused it)"};
  return exported;
}

result<onnx_model> export_onnx(const compute::model& net, const job_spec& job,
                               const std::string& path) {
  auto preprocessing = job_preprocessing::of(job);
  if (!preprocessing)
    return preprocessing.err();
  auto exported = to_onnx(net, *preprocessing, job.reader().getName().cStr());
  if (!exported)
    return error{fmt::format("{}: {}", job.source(), exported.err().message)};
  const auto bytes = std::as_bytes(std::span{exported->bytes.data(), exported->bytes.size()});
  if (auto written = write_file_atomically(path, bytes, "ONNX model"); !written)
    return written.err();
  return exported;
}

} // namespace strom::runtime
