// SPDX-License-Identifier: MIT
// The assets the real binary embeds (cmake/embed_file.cmake), empty for the
// fuzz targets: the page's script is not what is fuzzed.
#include <cstddef>

namespace writelab::embedded {
extern const char chart_js[] = "";
extern const std::size_t chart_js_size = 0;
extern const char report_js[] = "";
extern const std::size_t report_js_size = 0;
}  // namespace writelab::embedded
