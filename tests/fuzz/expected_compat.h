// SPDX-License-Identifier: MIT
// Fuzz builds only (force-included by tests/fuzz/CMakeLists.txt): a minimal
// std::expected for clang++ 14 with libstdc++ 12, whose <expected> needs
// __cpp_concepts >= 202002L (conditionally trivial special members) that
// clang 14 does not have, so it declares nothing there. With a compiler
// that has std::expected this header adds nothing.
//
// It covers what the fuzzed parsers use: construction from a value or from
// std::unexpected, has_value / operator bool, *, ->, value, error, value_or,
// and expected<void, E>. value() on an error traps: a fuzz build reports it.
#pragma once

#include <expected>
#include <version>

#ifndef __cpp_lib_expected
#define WRITELAB_EXPECTED_COMPAT 1  // include/writelab/result.h interoperates with it

#include <concepts>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

namespace std {

template <class E>
class unexpected {
 public:
  template <class Err = E>
  requires(!is_same_v<remove_cvref_t<Err>, unexpected> &&
           constructible_from<E, Err>) constexpr explicit unexpected(Err&& e)
      : error_(std::forward<Err>(e)) {}
  constexpr const E& error() const& noexcept { return error_; }
  constexpr E& error() & noexcept { return error_; }
  constexpr E&& error() && noexcept { return std::move(error_); }

 private:
  E error_;
};
template <class E>
unexpected(E) -> unexpected<E>;

template <class T, class E>
class expected {
 public:
  using value_type = T;
  using error_type = E;
  using unexpected_type = unexpected<E>;

  constexpr expected() requires default_initializable<T> : v_(in_place_index<0>) {}
  template <class U = T>
  requires(!is_same_v<remove_cvref_t<U>, expected> && constructible_from<T, U> &&
           !is_same_v<remove_cvref_t<U>, in_place_t>) constexpr expected(U&& value)
      : v_(in_place_index<0>, std::forward<U>(value)) {}
  template <class G>
  requires constructible_from<E, const G&>
  constexpr expected(const unexpected<G>& u) : v_(in_place_index<1>, u.error()) {}
  template <class G>
  requires constructible_from<E, G>
  constexpr expected(unexpected<G>&& u) : v_(in_place_index<1>, std::move(u).error()) {}

  constexpr bool has_value() const noexcept { return v_.index() == 0; }
  constexpr explicit operator bool() const noexcept { return has_value(); }

  constexpr T& operator*() & noexcept { return *get_if<0>(&v_); }
  constexpr const T& operator*() const& noexcept { return *get_if<0>(&v_); }
  constexpr T&& operator*() && noexcept { return std::move(*get_if<0>(&v_)); }
  constexpr T* operator->() noexcept { return get_if<0>(&v_); }
  constexpr const T* operator->() const noexcept { return get_if<0>(&v_); }

  constexpr T& value() & { return Checked(), **this; }
  constexpr const T& value() const& { return Checked(), **this; }
  constexpr T&& value() && { return Checked(), std::move(**this); }
  constexpr E& error() & noexcept { return *get_if<1>(&v_); }
  constexpr const E& error() const& noexcept { return *get_if<1>(&v_); }
  constexpr E&& error() && noexcept { return std::move(*get_if<1>(&v_)); }
  template <class U>
  constexpr T value_or(U&& other) const& {
    return has_value() ? **this : static_cast<T>(std::forward<U>(other));
  }
  template <class U>
  constexpr T value_or(U&& other) && {
    return has_value() ? std::move(**this) : static_cast<T>(std::forward<U>(other));
  }

 private:
  constexpr int Checked() const {
    if (!has_value()) __builtin_trap();
    return 0;
  }
  variant<T, E> v_;
};

template <class E>
class expected<void, E> {
 public:
  using value_type = void;
  using error_type = E;

  constexpr expected() noexcept = default;
  template <class G>
  requires constructible_from<E, const G&>
  constexpr expected(const unexpected<G>& u) : error_(in_place, u.error()) {}
  template <class G>
  requires constructible_from<E, G>
  constexpr expected(unexpected<G>&& u) : error_(in_place, std::move(u).error()) {}

  constexpr bool has_value() const noexcept { return !error_.has_value(); }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr void operator*() const noexcept {}
  constexpr void value() const {
    if (!has_value()) __builtin_trap();
  }
  constexpr E& error() & noexcept { return *error_; }
  constexpr const E& error() const& noexcept { return *error_; }
  constexpr E&& error() && noexcept { return std::move(*error_); }

 private:
  optional<E> error_;
};

}  // namespace std

#endif  // __cpp_lib_expected
