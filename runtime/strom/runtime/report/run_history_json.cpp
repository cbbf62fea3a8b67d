#include "strom/runtime/report/run_history_json.hpp"

#include <fmt/format.h>

#include "strom/runtime/json_text.hpp"

namespace strom::runtime {

namespace {

/// `items` as a JSON array, each item written by `write`.
template <class T, class Write>
std::string json_array(const std::vector<T>& items, Write write) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1)
      out += ',';
    out += write(item);
  }
  return out + ']';
}

} // namespace

std::string history_json_fields(const run_history& history) {
  const auto epochs = json_array(history.epochs, [](const epoch_record& e) {
    return fmt::format(
      "{{\"epoch\":{},\"train_loss\":{},\"test_loss\":{},\"test_accuracy\":{},\"seconds\":{},"
      "\"samples_per_second\":{},\"at_seconds\":{}}}",
      e.epoch, json_number(e.train_loss),
      e.test_accuracy < 0 ? "null" : json_number(e.test_loss),
      e.test_accuracy < 0 ? "null" : json_number(e.test_accuracy), json_number(e.seconds),
      json_number(e.samples_per_second), json_number(e.at_seconds));
  });
  const auto nodes = json_array(history.nodes, [](const node_record& n) {
    const auto tensors = json_array(n.tensors, [](const tensor_record& t) {
      return fmt::format("{{\"tensor\":{},\"threshold\":{},\"values_sent\":{},\"encodes\":{},"
                         "\"elements\":{}}}",
                         json_string(t.tensor), json_number(t.threshold), t.values_sent,
                         t.encodes, t.elements);
    });
    return fmt::format(
      "{{\"at_seconds\":{},\"node\":{},\"samples\":{},\"bytes_sent\":{},\"bytes_received\":{},"
      "\"updates\":{},\"density_sum\":{},\"threshold\":{},\"tensors\":{}}}",
      json_number(n.at_seconds), json_string(n.node), n.samples, n.bytes_sent, n.bytes_received,
      n.updates, json_number(n.density_sum), json_number(n.threshold), tensors);
  });
  const auto membership = json_array(history.membership, [](const membership_record& m) {
    return fmt::format("{{\"at_seconds\":{},\"kind\":{},\"count\":{}}}",
                       json_number(m.at_seconds), json_string(m.kind), m.count);
  });
  return fmt::format("\"epoch_history\":{},\"node_history\":{},\"membership_events\":{}", epochs,
                     nodes, membership);
}

} // namespace strom::runtime
