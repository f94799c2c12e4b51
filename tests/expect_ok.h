// SPDX-License-Identifier: MIT
// ASSERT_OK(expr) and EXPECT_OK(expr) for a writelab::Status or any
// std::expected whose error is an Error or a string: the test fails when expr
// holds an error, and the failure shows that error's message, not "false".
//   ASSERT_OK(journal->Record(step));
//   auto fd = OpenTrustedDir(path);
//   ASSERT_OK(fd);  // then use *fd
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "writelab/error.h"

namespace writelab::testing {

inline std::string Describe(const Error& e) { return e.Message(); }
inline const std::string& Describe(const std::string& s) { return s; }

// The error of a result that must hold one. When it holds a value instead,
// the test fails here and the caller gets an error that matches nothing,
// not the undefined behaviour of .error() on a value.
template <class R>
auto ErrorOf(const R& result) -> std::decay_t<decltype(result.error())> {
  if (!result.has_value()) return result.error();
  ADD_FAILURE() << "expected an error, but it succeeded";
  if constexpr (std::is_same_v<std::decay_t<decltype(result.error())>, Error>)
    return Error{-1, "(no error: it succeeded)"};
  else
    return "(no error: it succeeded)";
}

}  // namespace writelab::testing

// The switch keeps a caller's `else` from binding to the macro's `if`.
#define WRITELAB_CHECK_OK_(expr, on_failure)                           \
  switch (0)                                                           \
  case 0:                                                              \
  default:                                                             \
    if (const auto& writelab_ok_ = (expr); writelab_ok_.has_value()) { \
    } else                                                             \
      on_failure << #expr << " failed: " << ::writelab::testing::Describe(writelab_ok_.error())

#define ASSERT_OK(expr) WRITELAB_CHECK_OK_(expr, GTEST_FAIL())
#define EXPECT_OK(expr) WRITELAB_CHECK_OK_(expr, ADD_FAILURE())
