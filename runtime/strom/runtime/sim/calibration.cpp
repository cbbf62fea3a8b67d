#include "strom/runtime/sim/calibration.hpp"

#include <capnp/message.h>
#include <capnp/serialize-text.h>
#include <fmt/format.h>

#include <cmath>

#include "strom/runtime/job/capnp_text_file.hpp"

namespace strom::runtime::sim {

namespace {

/// A calibration holds a few densities: 64 KiB is far beyond any real one. It nests 3 deep.
constexpr text_file_kind calibration_kind{"calibration file", 1 << 16, 16, 4};

bool finite_non_negative(double value) { return std::isfinite(value) && value >= 0; }

} // namespace

result<calibration_table> parse_calibration(std::string_view text, const std::string& source) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::Calibration>();
  if (auto decoded = decode_capnp_text(text, source, calibration_kind, capnp::toDynamic(root));
      !decoded)
    return decoded.err();
  auto c = root.asReader();
  auto bad = [&](const char* field, auto value, const char* wanted) {
    return error{fmt::format("{}: {}: {} {}", source, field, value, wanted)};
  };
  if (!(std::isfinite(c.getStepSeconds()) && c.getStepSeconds() > 0))
    return bad("stepSeconds", c.getStepSeconds(), "is not a time above 0");
  if (c.getBatchSize() < 1)
    return bad("batchSize", c.getBatchSize(), "is below 1");
  if (c.getSamplesPerEpoch() < 1)
    return bad("samplesPerEpoch", c.getSamplesPerEpoch(), "is below 1");
  if (!(finite_non_negative(c.getMeasuredDensity()) && c.getMeasuredDensity() <= 1))
    return bad("measuredDensity", c.getMeasuredDensity(), "is outside [0, 1]");
  if (c.getDensities().size() == 0)
    return error{fmt::format("{}: densities: none measured; run 'strom sim calibrate' again",
                             source)};
  for (auto [field, rate] : {std::pair{"tlsSealBytesPerSecond", c.getTlsSealBytesPerSecond()},
                             std::pair{"tlsOpenBytesPerSecond", c.getTlsOpenBytesPerSecond()}})
    if (!finite_non_negative(rate))
      return bad(field, rate, "is not a rate of at least 0");
  calibration_table table;
  table.base.tls_seal_bytes_per_second = c.getTlsSealBytesPerSecond();
  table.base.tls_open_bytes_per_second = c.getTlsOpenBytesPerSecond();
  table.base.step_seconds = c.getStepSeconds();
  table.base.batch_size = c.getBatchSize();
  table.base.parameters = c.getParameters();
  table.base.updater_floats = c.getUpdaterStateFloats();
  table.base.samples_per_epoch = c.getSamplesPerEpoch();
  table.measured_density = c.getMeasuredDensity();
  double previous = 0;
  for (unsigned i = 0; i < c.getDensities().size(); ++i) {
    auto d = c.getDensities()[i];
    const auto field = fmt::format("densities[{}]", i);
    if (!(std::isfinite(d.getDensity()) && d.getDensity() > previous && d.getDensity() <= 1))
      return error{fmt::format("{}: {}.density: {} is not above the previous density ({}) and "
                               "at most 1",
                               source, field, d.getDensity(), previous)};
    if (!finite_non_negative(d.getEncodeSeconds()))
      return error{fmt::format("{}: {}.encodeSeconds: {} is not a time of at least 0", source,
                               field, d.getEncodeSeconds())};
    if (!finite_non_negative(d.getDecodeSeconds()))
      return error{fmt::format("{}: {}.decodeSeconds: {} is not a time of at least 0", source,
                               field, d.getDecodeSeconds())};
    previous = d.getDensity();
    table.points.push_back({d.getDensity(), d.getEncodeSeconds(), d.getDecodeSeconds(),
                            d.getFrameBytes()});
  }
  return table;
}

result<calibration_table> load_calibration_file(const std::string& path) {
  auto text = read_text_file(path, calibration_kind);
  if (!text)
    return text.err();
  return parse_calibration(*text, path);
}

std::string to_text(schema::Calibration::Reader calibration) {
  capnp::TextCodec codec;
  codec.setPrettyPrint(true);
  return codec.encode(calibration).cStr();
}

} // namespace strom::runtime::sim
