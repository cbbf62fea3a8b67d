#include "strom/runtime/report/run_history_json.hpp"

#include <nlohmann/json.hpp>

namespace strom::runtime {

namespace {

using json = nlohmann::ordered_json;

/// `items` as a JSON array, each item made by `make`.
template <class T, class Make>
json array_of(const std::vector<T>& items, Make make) {
  auto out = json::array();
  for (const auto& item : items)
    out.push_back(make(item));
  return out;
}

} // namespace

void add_history(json& metrics, const run_history& history) {
  if (!history.settings.empty()) {
    auto settings = json::object();
    for (const auto& [name, value] : history.settings)
      settings[name] = value;
    metrics["settings"] = std::move(settings);
  }
  metrics["epoch_history"] = array_of(history.epochs, [](const epoch_record& e) {
    const bool tested = e.test_accuracy >= 0;
    return json{{"epoch", e.epoch},
                {"train_loss", e.train_loss},
                {"test_loss", tested ? json(e.test_loss) : json(nullptr)},
                {"test_accuracy", tested ? json(e.test_accuracy) : json(nullptr)},
                {"seconds", e.seconds},
                {"samples_per_second", e.samples_per_second},
                {"at_seconds", e.at_seconds}};
  });
  metrics["node_history"] = array_of(history.nodes, [](const node_record& n) {
    return json{{"at_seconds", n.at_seconds},
                {"node", n.node},
                {"samples", n.samples},
                {"bytes_sent", n.bytes_sent},
                {"bytes_received", n.bytes_received},
                {"updates", n.updates},
                {"density_sum", n.density_sum},
                {"threshold", n.threshold},
                {"tensors", array_of(n.tensors, [](const tensor_record& t) {
                   return json{{"tensor", t.tensor},
                               {"threshold", t.threshold},
                               {"values_sent", t.values_sent},
                               {"encodes", t.encodes},
                               {"elements", t.elements}};
                 })}};
  });
  metrics["membership_events"] = array_of(history.membership, [](const membership_record& m) {
    return json{{"at_seconds", m.at_seconds}, {"kind", m.kind}, {"count", m.count}};
  });
}

} // namespace strom::runtime
