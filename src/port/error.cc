#include "writelab/error.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace writelab {

std::string Error::Message() const {
  if (code == 0) return context;
  return context + ": " + std::strerror(code);
}

Error ErrnoError(int code, std::string context) { return Error{code, std::move(context)}; }

Error PlainError(std::string message) { return Error{0, std::move(message)}; }

std::string ErrnoName(int code) {
  const char* name = strerrorname_np(code);  // glibc 2.32+
  return name ? name : "E" + std::to_string(code);
}

}  // namespace writelab
