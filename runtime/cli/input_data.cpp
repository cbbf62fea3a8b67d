#include "input_data.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strom::cli {

std::vector<option_spec> input_data_options() {
  return {
    {"data", "FILE",
     "samples: IDX images (plain or gzip) or CSV rows of the model's features, with or without "
     "a label column; the job's preprocessing is applied"},
    {"labels", "FILE", "IDX labels of the --data images"},
  };
}

result<runtime::input_samples> load_input_data(const runtime::trained_model& model,
                                               const std::string& data_path,
                                               const std::optional<std::string>& labels_path) {
  auto samples =
    runtime::load_input_samples(model.job(), model.features(), data_path, labels_path);
  if (!samples)
    return samples.err();
  const auto& labels = samples->data.labels;
  if (samples->labelled && !labels.empty()) {
    const auto top = *std::max_element(labels.begin(), labels.end());
    if (static_cast<std::size_t>(top) >= model.classes())
      return error{fmt::format("{}: a label {} in the data, but the model has {} classes",
                               labels_path.value_or(data_path), top, model.classes())};
  }
  return samples;
}

} // namespace strom::cli
