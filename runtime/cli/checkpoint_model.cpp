#include "checkpoint_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "strom/compute/replica_from_spec.hpp"

namespace strom::cli {

result<checkpoint_model> load_checkpoint_model(const std::string& path) {
  auto saved = runtime::load_checkpoint(path);
  if (!saved)
    return saved.err();
  auto built = compute::make_replica(saved->job.reader(), 0);
  if (!built)
    return error{fmt::format("{}: job in checkpoint: {}", path, built.err().message)};
  if (auto ok = runtime::restore_checkpoint(*saved, **built); !ok)
    return error{fmt::format("{}: {}", path, ok.err().message)};
  return checkpoint_model{std::move(*saved), std::move(*built)};
}

std::vector<option_spec> input_data_options() {
  return {
    {"data", "FILE",
     "samples: IDX images (plain or gzip) or CSV rows of the model's features, with or without "
     "a label column; the job's preprocessing is applied"},
    {"labels", "FILE", "IDX labels of the --data images"},
  };
}

result<runtime::input_samples> load_input_data(const checkpoint_model& model,
                                               const arguments& args) {
  const auto data = args.get("data");
  if (!data)
    return error{"--data FILE is required"};
  auto& net = model.replica->net();
  auto samples =
    runtime::load_input_samples(model.saved.job, net.input_shape().size(), *data, args.get("labels"));
  if (!samples)
    return samples.err();
  const auto& labels = samples->data.labels;
  if (samples->labelled && !labels.empty()) {
    const auto top = *std::max_element(labels.begin(), labels.end());
    if (static_cast<std::size_t>(top) >= net.classes())
      return error{fmt::format("{}: a label {} in the data, but the model has {} classes",
                               args.get("labels").value_or(*data), top, net.classes())};
  }
  return samples;
}

} // namespace strom::cli
