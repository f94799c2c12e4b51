// SPDX-License-Identifier: MIT
// Result<T>: a value or an Error, the return type of writelab's public API.
//
// It is writelab's own small type, the same in every language mode, so that
// the library (built as C++23) and a program built as C++20 agree on it:
//   auto w = writelab::RecordWriter::Open(path);
//   if (!w) return Report(w.error().Message());
//   w->Append(record, writelab::Durable::kYes);
// It has the part of std::expected's interface that callers use: has_value
// and operator bool, *, ->, error(). Under C++23 it also converts from
// std::unexpected(error) and from std::expected<T, Error>, so code that has
// moved to std::expected mixes with it freely. Without C++23, fail with
// writelab::Unexpected(error).
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <version>

// std::expected interop where the standard library has it (C++23 with
// libstdc++ 12; not clang 14, whose concepts it needs), or where
// tests/fuzz/expected_compat.h stands in for it.
#if defined(__cpp_lib_expected) || defined(WRITELAB_EXPECTED_COMPAT)
#define WRITELAB_STD_EXPECTED 1
#include <expected>
#endif

namespace writelab {

// The error side of a Result, as std::unexpected is for std::expected.
template <class E>
class Unexpected {
 public:
  explicit Unexpected(E error) : error_(std::move(error)) {}
  const E& error() const& { return error_; }
  E&& error() && { return std::move(error_); }

 private:
  E error_;
};

// A value or an E (Error for the public API). Using the value of a Result
// that holds an error is undefined, as for std::expected's operator*.
template <class T, class E>
class BasicResult {
 public:
  BasicResult(const T& value) : v_(std::in_place_index<0>, value) {}
  BasicResult(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}
  template <class G>
  BasicResult(Unexpected<G> u) : v_(std::in_place_index<1>, std::move(u).error()) {}
#ifdef WRITELAB_STD_EXPECTED
  template <class G>
  requires std::is_constructible_v<E, G> BasicResult(std::unexpected<G> u)
      : v_(std::in_place_index<1>, std::move(u).error()) {}
  BasicResult(std::expected<T, E> x)
      : v_(x ? std::variant<T, E>(std::in_place_index<0>, std::move(*x))
             : std::variant<T, E>(std::in_place_index<1>, std::move(x).error())) {}
#endif

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& operator*() & { return *std::get_if<0>(&v_); }
  const T& operator*() const& { return *std::get_if<0>(&v_); }
  T&& operator*() && { return std::move(*std::get_if<0>(&v_)); }
  T* operator->() { return std::get_if<0>(&v_); }
  const T* operator->() const { return std::get_if<0>(&v_); }

  E& error() & { return *std::get_if<1>(&v_); }
  const E& error() const& { return *std::get_if<1>(&v_); }
  E&& error() && { return std::move(*std::get_if<1>(&v_)); }

 private:
  std::variant<T, E> v_;
};

// Success without a value, or an E.
template <class E>
class BasicResult<void, E> {
 public:
  BasicResult() = default;
  template <class G>
  BasicResult(Unexpected<G> u) : error_(std::move(u).error()) {}
#ifdef WRITELAB_STD_EXPECTED
  template <class G>
  requires std::is_constructible_v<E, G> BasicResult(std::unexpected<G> u)
      : error_(std::move(u).error()) {}
  BasicResult(std::expected<void, E> x) {
    if (!x) error_ = std::move(x).error();
  }
#endif

  bool has_value() const { return !error_.has_value(); }
  explicit operator bool() const { return has_value(); }

  E& error() & { return *error_; }
  const E& error() const& { return *error_; }
  E&& error() && { return std::move(*error_); }

 private:
  std::optional<E> error_;
};

}  // namespace writelab
