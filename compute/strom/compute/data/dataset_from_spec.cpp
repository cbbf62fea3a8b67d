#include "strom/compute/data/dataset_from_spec.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "strom/compute/data/csv_reader.hpp"
#include "strom/compute/data/idx_reader.hpp"
#include "strom/compute/data/preprocessing.hpp"

namespace strom::compute {

namespace {

error prefixed(std::string_view field, const error& cause) {
  return error{fmt::format("{}: {}", field, cause.message)};
}

/// The path in `text`, relative ones taken from `base_dir`.
result<std::string> resolve(capnp::Text::Reader text, const std::string& base_dir,
                            std::string_view field) {
  if (text.size() == 0)
    return error{fmt::format("{}: expected a file path, found an empty text", field)};
  const std::filesystem::path path(text.cStr());
  if (path.is_absolute())
    return path.string();
  return (std::filesystem::path(base_dir) / path).string();
}

result<dataset> load_idx(schema::IdxSource::Reader source, const std::string& base_dir,
                         const std::string& field) {
  const auto images_field = field + ".idx.images";
  const auto labels_field = field + ".idx.labels";
  auto images_path = resolve(source.getImages(), base_dir, images_field);
  if (!images_path)
    return images_path.err();
  auto labels_path = resolve(source.getLabels(), base_dir, labels_field);
  if (!labels_path)
    return labels_path.err();
  auto images = read_idx_images(*images_path);
  if (!images)
    return prefixed(images_field, images.err());
  auto labels = read_idx_labels(*labels_path);
  if (!labels)
    return prefixed(labels_field, labels.err());
  auto data = make_idx_dataset(std::move(*images), std::move(*labels), *images_path,
                               *labels_path);
  if (!data)
    return prefixed(field + ".idx", data.err());
  return data;
}

result<dataset> load_csv(schema::CsvSource::Reader source, const std::string& base_dir,
                         const std::string& field) {
  const auto path_field = field + ".csv.path";
  auto path = resolve(source.getPath(), base_dir, path_field);
  if (!path)
    return path.err();
  const auto delimiter = source.getDelimiter();
  if (delimiter.size() != 1)
    return error{fmt::format("{}.csv.delimiter: expected one character, found '{}'", field,
                             delimiter.cStr())};
  csv_options options;
  options.label_column = source.getLabelColumn();
  options.header = source.getHeader();
  options.delimiter = delimiter[0];
  auto data = read_csv(*path, options);
  if (!data)
    return prefixed(path_field, data.err());
  return data;
}

/// The dataset a source names; `present` is false for `none`.
result<dataset> load_source(schema::DataSource::Reader source, const std::string& base_dir,
                            const std::string& field, bool& present) {
  present = true;
  switch (source.which()) {
    case schema::DataSource::IDX: return load_idx(source.getIdx(), base_dir, field);
    case schema::DataSource::CSV: return load_csv(source.getCsv(), base_dir, field);
    case schema::DataSource::NONE: break;
  }
  present = false;
  return dataset{};
}

standardize_kind to_kind(schema::Standardize standardize) {
  switch (standardize) {
    case schema::Standardize::GLOBAL: return standardize_kind::global;
    case schema::Standardize::PER_FEATURE: return standardize_kind::per_feature;
    case schema::Standardize::NONE: break;
  }
  return standardize_kind::none;
}

std::string shape_text(const shape& s) {
  return fmt::format("{}x{}x{}", s.channels, s.height, s.width);
}

} // namespace

result<training_data> load_data(schema::DataSpec::Reader spec, const std::string& base_dir) {
  const auto preprocessing = spec.getPreprocessing();
  const float factor = preprocessing.getScale();
  if (!std::isfinite(factor) || factor == 0.0f)
    return error{fmt::format("data.preprocessing.scale: expected a finite non-zero number, "
                             "found {}",
                             factor)};
  bool has_train = false;
  bool has_test = false;
  auto train = load_source(spec.getTrain(), base_dir, "data.train", has_train);
  if (!train)
    return train.err();
  if (!has_train)
    return error{"data.train: expected an idx or csv source, found none"};
  auto test = load_source(spec.getTest(), base_dir, "data.test", has_test);
  if (!test)
    return test.err();
  if (!has_test)
    test->sample_shape = train->sample_shape;
  if (test->sample_shape != train->sample_shape)
    return error{fmt::format("data.test: sample shape {} differs from data.train's {}",
                             shape_text(test->sample_shape), shape_text(train->sample_shape))};
  const std::size_t classes = std::max(train->classes, test->classes);
  train->classes = test->classes = classes;

  if (factor != 1.0f) {
    scale(*train, factor);
    scale(*test, factor);
  }
  const auto stats = fit_standardization(*train, to_kind(preprocessing.getStandardize()));
  apply(*train, stats);
  apply(*test, stats);
  return training_data{std::move(*train), std::move(*test), stats};
}

} // namespace strom::compute
