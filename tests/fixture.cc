// SPDX-License-Identifier: MIT
// A fixed result document for the reporters' golden tests (unit_tests only).
#include "fixture.h"

namespace writelab {

Document FixedDocument() {
  Document doc;
  doc.writelab_version = "0.1.0";
  doc.command_line = "writelab stream --dir /mnt/t --size 1G";
  doc.started_at = "2026-11-30T12:00:00Z";
  doc.finished_at = "2026-11-30T12:01:00Z";
  doc.host = {"box",
              "6.18.0",
              "#1 SMP",
              "x86_64",
              2,
              25'000'000'000ull,
              {{"dirty_ratio", 20}, {"dirty_background_ratio", 10}},
              ""};
  ExperimentResult e;
  e.name = "stream";
  e.reproduces = "overwrite.c (2009)";
  e.row_label = "strategy";
  e.target.path = "/mnt/t";
  e.target.fs_type = "ext4";
  e.target.mount_source = "/dev/vda";
  e.target.device = "vda";
  e.target.scheduler = "mq-deadline";
  e.target.schedulers = {"none", "mq-deadline"};
  e.target.rotational = false;
  e.target.logical_block_size = 512;
  e.params = {{"size", int64_t{1} << 30, "bytes"},
              {"interval", 1.0, "s"},
              {"probe", true, ""},
              {"strategies", std::string("plain,dontcache"), ""}};
  e.table = {"mb_s", "cached_end", "probe_p99_ms"};
  Row plain;
  plain.name = "plain";
  plain.figures = {
      {"mb_s", "MB/s", "MB/s", "writes and the final fsync", Summarize({494, 411, 1853})},
      {"cached_end", "left cached", "bytes", "after the sync", Summarize({1073741824})},
      {"probe_p99_ms", "probe p99", "ms", "4 KiB write+fdatasync", Summarize({180.5})}};
  Histogram h;
  for (uint64_t v : {1000, 2000, 3000, 4000, 5000, 180'000'000}) h.Record(v);
  plain.latencies.push_back(Latency::From(h, "probe", "bystander probe", "4 KiB pwrite+fdatasync"));
  plain.series.push_back(
      {"timeline",
       0,
       1.0,
       {{"t", "s"}, {"throughput", "MB/s"}},
       {{1.0, 500.0}, {2.0, 480.5}, {3.0, 470.0}, {4.0, 455.5}, {5.0, 440.0}, {6.0, 430.5}}});
  plain.notes = {"a note"};
  Row dontcache;
  dontcache.name = "dontcache";
  dontcache.status = RowStatus::kUnsupported;
  dontcache.error_code = 95;
  dontcache.message = "pwritev2 RWF_DONTCACHE at 0: Operation not supported";
  e.rows = {plain, dontcache};
  e.notes = {"order rotates"};
  doc.experiments.push_back(e);
  return doc;
}

}  // namespace writelab
