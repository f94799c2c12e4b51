// SPDX-License-Identifier: MIT
// CLI11's classes, declared only: a header that names them in a function's
// signature includes this, and the source that calls CLI11 includes
// <CLI/CLI.hpp>, which costs some 10 s of compile time per translation unit
// on a 2-core machine (docs/performance.md, issue 47).
#pragma once

namespace CLI {
class App;
class Option;
class Validator;
class ParseError;
}  // namespace CLI
