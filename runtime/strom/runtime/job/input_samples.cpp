#include "strom/runtime/job/input_samples.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "strom/compute/data/csv_reader.hpp"
#include "strom/compute/data/data_content.hpp"
#include "strom/compute/data/file_contents.hpp"
#include "strom/compute/data/idx_reader.hpp"

namespace strom::runtime {

namespace {

/// Compressed bytes enough to inflate an IDX header from any gzip file strom writes or reads.
constexpr std::size_t sniff_bytes = 64 * 1024;

/// Whether the content of `bytes` (gunzipped when gzip) starts as an IDX file does: two zero
/// bytes. A CSV file starts with text.
result<bool> is_idx(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  compute::data_content prefix{
    path, {bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(
                                             std::min(bytes.size(), sniff_bytes))}};
  std::array<std::uint8_t, 2> magic{};
  auto got = prefix.read(magic);
  if (!got)
    return got.err();
  return *got == magic.size() && magic[0] == 0 && magic[1] == 0;
}

result<input_samples> load_idx(const std::string& data_path, std::vector<std::uint8_t> bytes,
                               const std::optional<std::string>& labels_path) {
  auto images = compute::parse_idx_images(data_path, std::move(bytes));
  if (!images)
    return images.err();
  if (labels_path) {
    auto labels = compute::read_idx_labels(*labels_path);
    if (!labels)
      return labels.err();
    auto data = compute::make_idx_dataset(std::move(*images), std::move(*labels), data_path,
                                          *labels_path);
    if (!data)
      return data.err();
    return input_samples{std::move(*data), true};
  }
  compute::dataset data;
  data.sample_shape = images->sample_shape;
  data.classes = 1;
  data.features = std::move(images->features);
  data.labels.assign(images->count, 0);
  return input_samples{std::move(data), false};
}

/// The column a labelled CSV row holds its label in: the job's own when it trains on CSV.
std::size_t label_column_of(const job_spec& job) {
  const auto train = job.reader().getData().getTrain();
  return train.isCsv() ? train.getCsv().getLabelColumn() : 0;
}

result<input_samples> load_csv(const job_spec& job, std::size_t features,
                               const std::string& data_path, std::vector<std::uint8_t> bytes) {
  compute::csv_options options;
  const auto train = job.reader().getData().getTrain();
  if (train.isCsv()) {
    options.header = train.getCsv().getHeader();
    const auto delimiter = train.getCsv().getDelimiter();
    if (delimiter.size() == 1)
      options.delimiter = delimiter[0];
  }
  // Read once without a label to count the columns, then as they turn out to be.
  options.labelled = false;
  auto all_features = compute::parse_csv(data_path, bytes, options);
  if (!all_features)
    return all_features.err();
  const auto columns = all_features->sample_shape.size();
  if (columns == features) {
    auto& data = *all_features;
    data.labels.assign(data.features.size() / features, 0);
    data.classes = 1;
    return input_samples{std::move(data), false};
  }
  if (columns != features + 1)
    return error{fmt::format("{}: rows of {} columns, but the model takes {} features (a row "
                             "holds them, or them and a label)",
                             data_path, columns, features)};
  options.labelled = true;
  options.label_column = label_column_of(job);
  auto labelled = compute::parse_csv(data_path, std::move(bytes), options);
  if (!labelled)
    return labelled.err();
  return input_samples{std::move(*labelled), true};
}

} // namespace

result<input_samples> load_input_samples(const job_spec& job, std::size_t features,
                                         const std::string& data_path,
                                         const std::optional<std::string>& labels_path) {
  auto bytes = compute::read_file_bytes(data_path);
  if (!bytes)
    return bytes.err();
  auto idx = is_idx(data_path, *bytes);
  if (!idx)
    return idx.err();
  if (!*idx && labels_path)
    return error{fmt::format("--labels {}: labels come from a file only for IDX images; {} is "
                             "CSV, whose rows hold their label",
                             *labels_path, data_path)};
  auto samples = *idx ? load_idx(data_path, std::move(*bytes), labels_path)
                      : load_csv(job, features, data_path, std::move(*bytes));
  if (!samples)
    return samples.err();
  if (samples->data.sample_shape.size() != features)
    return error{fmt::format("{}: {} floats a sample, but the model takes {}", data_path,
                             samples->data.sample_shape.size(), features)};
  return samples;
}

} // namespace strom::runtime
