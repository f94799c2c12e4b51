// SPDX-License-Identifier: MIT
// What the results history reads (src/history) on any bytes, never
// crashing and never letting an exception out:
//   - first byte 's': the rest is a figure's samples column
//     (SamplesFromJson); what it accepts is written back the same;
//   - otherwise the bytes are a history database file (an import from
//     another machine, a damaged file): opened in memory, then every query a
//     subcommand makes (list, export and show of each run, trend of each
//     experiment's figures, check's baselines) either answers or says why.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/document_json.h"
#include "history/record.h"
#include "history/store.h"
#include "history/trend.h"

namespace {

void Samples(const std::string& text) {
  auto samples = writelab::SamplesFromJson(text);
  if (!samples) {
    if (samples.error().empty()) __builtin_trap();
    return;
  }
  std::string once = writelab::SamplesToJson(*samples);
  auto again = writelab::SamplesFromJson(once);
  if (!again || writelab::SamplesToJson(*again) != once) __builtin_trap();
}

void Trends(const writelab::HistoryStore& store) {
  auto experiments = store.Known("");
  if (!experiments) return;
  for (const std::string& e : *experiments) {
    auto figures = store.Known(e);
    if (!figures) continue;
    for (const std::string& f : *figures) {
      writelab::TrendQuery q{e, f, "", {}};
      if (auto points = store.Trend(q); points) writelab::RenderTrendText(q, *points);
    }
  }
}

void Database(const std::string& bytes) {
  auto store = writelab::HistoryStore::FromBytes(bytes);
  if (!store) {
    if (store.error().Message().empty()) __builtin_trap();
    return;
  }
  auto runs = store->List({});
  if (!runs) return;
  for (const writelab::StoredRun& r : *runs) {
    if (auto text = store->DocumentText(r.id); text) writelab::FromJson(*text);
    store->PreviousOnSameMachine(r);
    store->LatestLabelled(r.record.label, r);
  }
  store->Newest();
  Trends(*store);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  if (!bytes.empty() && bytes[0] == 's')
    Samples(bytes.substr(1));
  else
    Database(bytes);
  return 0;
}
