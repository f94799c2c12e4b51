// SPDX-License-Identifier: MIT
// What `report` and `compare` do with a document FromJson accepted: the HTML
// page, the CSV and the comparison with itself and with an empty document
// never crash. The reader checks types; this checks that the reporters
// cope with any values of those types (names, counts, empty lists).
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/commands.h"
#include "core/document_json.h"
#include "report/compare.h"
#include "report/csv.h"
#include "report/html.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto doc = writelab::FromJson(std::string(reinterpret_cast<const char*>(data), size));
  if (!doc) return 0;
  std::string html =
      writelab::RenderHtml({*doc, *doc}, writelab::EmbeddedHtmlAssets(), writelab::Reports());
  std::string csv = writelab::RenderCsv(*doc);
  auto same = writelab::CompareDocuments(*doc, *doc);
  auto empty = writelab::CompareDocuments(*doc, writelab::Document{});
  if (html.empty() || (same && same->empty() && empty && empty->empty())) __builtin_trap();
  return 0;
}
