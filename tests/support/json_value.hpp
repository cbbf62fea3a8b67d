#pragma once
// A strict little JSON reader for tests of what strom writes (a timeline's Chrome trace):
// RFC 8259 values into a tree; malformed text throws std::runtime_error naming the offset.

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace strom::test {

struct json_value;
using json_array = std::vector<json_value>;
using json_object = std::map<std::string, json_value>;

/// null, a boolean, a number, a string, an array or an object.
struct json_value {
  std::variant<std::nullptr_t, bool, double, std::string, std::shared_ptr<json_array>,
               std::shared_ptr<json_object>>
    held;

  bool is_object() const { return std::holds_alternative<std::shared_ptr<json_object>>(held); }
  bool is_array() const { return std::holds_alternative<std::shared_ptr<json_array>>(held); }
  bool is_number() const { return std::holds_alternative<double>(held); }
  bool is_string() const { return std::holds_alternative<std::string>(held); }
  const json_object& object() const { return *std::get<std::shared_ptr<json_object>>(held); }
  const json_array& array() const { return *std::get<std::shared_ptr<json_array>>(held); }
  double number() const { return std::get<double>(held); }
  const std::string& string() const { return std::get<std::string>(held); }
  /// Whether an object holds `key`.
  bool has(const std::string& key) const { return is_object() && object().count(key) > 0; }
  const json_value& at(const std::string& key) const { return object().at(key); }
};

namespace detail {

class json_reader {
public:
  explicit json_reader(std::string_view text) : text_(text) {}

  json_value document() {
    auto value = parse_value();
    skip_space();
    if (at_ != text_.size())
      fail("text after the value");
    return value;
  }

private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON at offset " + std::to_string(at_) + ": " + what);
  }
  void skip_space() {
    while (at_ < text_.size() && (text_[at_] == ' ' || text_[at_] == '\n' || text_[at_] == '\r'
                                  || text_[at_] == '\t'))
      ++at_;
  }
  char peek() {
    skip_space();
    if (at_ >= text_.size())
      fail("unexpected end");
    return text_[at_];
  }
  void expect(char c) {
    if (peek() != c)
      fail(std::string{"expected '"} + c + "'");
    ++at_;
  }
  bool literal(std::string_view word) {
    if (text_.substr(at_, word.size()) != word)
      return false;
    at_ += word.size();
    return true;
  }
  std::string parse_string() {
    expect('"');
    std::string out;
    while (at_ < text_.size() && text_[at_] != '"') {
      const char c = text_[at_++];
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size())
        fail("unexpected end in an escape");
      const char e = text_[at_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u':
          if (at_ + 4 > text_.size())
            fail("short \\u escape");
          out += '?';  // the tests compare no non-ASCII text
          at_ += 4;
          break;
        default: fail("bad escape");
      }
    }
    expect('"');
    return out;
  }
  double parse_number() {
    const auto start = at_;
    if (text_[at_] == '-')
      ++at_;
    while (at_ < text_.size()
           && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.'
               || text_[at_] == 'e' || text_[at_] == 'E' || text_[at_] == '+'
               || text_[at_] == '-'))
      ++at_;
    const std::string digits{text_.substr(start, at_ - start)};
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size())
      fail("bad number '" + digits + "'");
    return value;
  }
  json_value parse_value() {
    const char c = peek();
    if (c == '{') {
      ++at_;
      auto object = std::make_shared<json_object>();
      if (peek() == '}') {
        ++at_;
        return {object};
      }
      for (;;) {
        auto key = parse_string();
        expect(':');
        (*object)[key] = parse_value();
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        return {object};
      }
    }
    if (c == '[') {
      ++at_;
      auto array = std::make_shared<json_array>();
      if (peek() == ']') {
        ++at_;
        return {array};
      }
      for (;;) {
        array->push_back(parse_value());
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect(']');
        return {array};
      }
    }
    if (c == '"')
      return {parse_string()};
    if (literal("true"))
      return {true};
    if (literal("false"))
      return {false};
    if (literal("null"))
      return {nullptr};
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c)))
      return {parse_number()};
    fail(std::string{"unexpected '"} + c + "'");
  }

  std::string_view text_;
  std::size_t at_ = 0;
};

} // namespace detail

/// Parses `text`; throws std::runtime_error on malformed JSON.
inline json_value parse_json(std::string_view text) { return detail::json_reader{text}.document(); }

} // namespace strom::test
