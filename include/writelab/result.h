// SPDX-License-Identifier: MIT
// Result<T>: a value or an Error, the return type of writelab's public API.
//
// It is writelab's own small type, the same in every language mode, so that
// the library (built as C++23) and a program built as C++20 agree on it:
//   auto w = writelab::RecordWriter::Open(path);
//   if (!w) return Report(w.error().Message());
//   w->Append(record, writelab::Durable::kYes);
// It has the part of std::expected's interface that callers use: has_value
// and operator bool, *, ->, value() (throws BadResultAccess on an error),
// value_or(), error(), and construction from anything T is constructible
// from. Under C++23 it also converts from
// std::unexpected(error) and from std::expected<T, Error>, so code that has
// moved to std::expected mixes with it freely. Without C++23, fail with
// writelab::Unexpected(error).
#pragma once

#include <exception>
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

// value() of a Result that holds an error, as std::bad_expected_access.
class BadResultAccess : public std::exception {
 public:
  const char* what() const noexcept override { return "writelab: value() of a failed Result"; }
};

template <class T, class E>
class BasicResult;

template <class U>
inline constexpr bool kIsResultOrUnexpected = false;
template <class T, class E>
inline constexpr bool kIsResultOrUnexpected<BasicResult<T, E>> = true;
template <class E>
inline constexpr bool kIsResultOrUnexpected<Unexpected<E>> = true;

// A value or an E (Error for the public API). Using the value of a Result
// that holds an error is undefined, as for std::expected's operator*.
template <class T, class E>
class BasicResult {
 public:
  BasicResult(const T& value) : v_(std::in_place_index<0>, value) {}
  BasicResult(T&& value) : v_(std::in_place_index<0>, std::move(value)) {}
  // From anything a T is made of (a Result<uint64_t> from an int...).
  template <class U>
  requires(std::is_constructible_v<T, U> && !std::is_same_v<std::remove_cvref_t<U>, T> &&
           !kIsResultOrUnexpected<std::remove_cvref_t<U>>) BasicResult(U&& value)
      : v_(std::in_place_index<0>, T(std::forward<U>(value))) {}
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

  T& value() & {
    Check();
    return **this;
  }
  const T& value() const& {
    Check();
    return **this;
  }
  T&& value() && {
    Check();
    return std::move(**this);
  }
  template <class U>
  T value_or(U&& fallback) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(fallback));
  }
  template <class U>
  T value_or(U&& fallback) && {
    return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(fallback));
  }

  E& error() & { return *std::get_if<1>(&v_); }
  const E& error() const& { return *std::get_if<1>(&v_); }
  E&& error() && { return std::move(*std::get_if<1>(&v_)); }

 private:
  void Check() const {
    if (!has_value()) throw BadResultAccess();
  }
  std::variant<T, E> v_;
};

// Success without a value, or an E.
template <class E>
class BasicResult<void, E> {
 public:
  BasicResult() = default;
  template <class G>
  BasicResult(Unexpected<G> u) : error_(std::move(u).error()) {}
  // From a Result with a value, which is dropped: its success or its error
  // (so that code that kept a Status from a call still compiles when the
  // call comes to return a value, as RecordWriter::Append did).
  template <class U>
  requires(!std::is_void_v<U>) BasicResult(const BasicResult<U, E>& r) {
    if (!r) error_ = r.error();
  }
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
  // Throws BadResultAccess on an error, as std::expected<void, E>::value().
  void value() const {
    if (!has_value()) throw BadResultAccess();
  }

  E& error() & { return *error_; }
  const E& error() const& { return *error_; }
  E&& error() && { return std::move(*error_); }

 private:
  std::optional<E> error_;
};

}  // namespace writelab
