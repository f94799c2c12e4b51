// SPDX-License-Identifier: MIT
// What every test uses, unit (src/**/*_test.cc) and integration (tests/)
// alike: reading and writing a whole file, and a temporary directory of its
// own, removed at the end.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace writelab::testing {

// The whole file (bytes as they are), "" when it cannot be read.
inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// A new directory (mkdtemp) under WRITELAB_TEST_DIR, else /var/tmp (a real
// file system: /tmp may be tmpfs, where writeback and direct I/O differ),
// named writelab-NAME-XXXXXX; removed with what it holds.
class TempDir {
 public:
  explicit TempDir(const std::string& name = "test") {
    const char* base = std::getenv("WRITELAB_TEST_DIR");
    std::string tmpl = std::string(base ? base : "/var/tmp") + "/writelab-" + name + "-XXXXXX";
    if (mkdtemp(tmpl.data())) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // "" when it could not be made (the test then fails on it).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace writelab::testing
