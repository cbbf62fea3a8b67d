#pragma once
// A small expected-style return for operations whose failure is normal input (files,
// frames, job specs, peers). Exceptions stay reserved for broken invariants.

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace strom {

/// Why an operation on outside input failed; the message names the thing and the value.
struct error {
  std::string message;
};

/// Either a T or an error.
template <class T>
class [[nodiscard]] result {
public:
  result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  result(error err) : state_(std::in_place_index<1>, std::move(err)) {}

  /// True when a value is held.
  bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  /// The value; only valid when ok().
  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T& operator*() const& { return value(); }

  /// The error; only valid when !ok().
  const error& err() const { assert(!ok()); return std::get<1>(state_); }

private:
  std::variant<T, error> state_;
};

/// The result of an operation that yields nothing but may fail.
template <>
class [[nodiscard]] result<void> {
public:
  result() = default;
  result(error err) : error_(std::move(err)), ok_(false) {}

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const error& err() const { assert(!ok_); return error_; }

private:
  error error_;
  bool ok_ = true;
};

/// Shorthand for the success value of result<void>.
inline result<void> success() { return {}; }

} // namespace strom
