// SPDX-License-Identifier: MIT
// What the history keeps of a result document, decided from the document
// alone (no database, no system calls): the run's row with its host and
// target fingerprints, and a row per figure of every measured row. The same
// document gives the same records, whether it is appended by the run that
// made it or imported later on another machine.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "core/result.h"

namespace writelab {

struct RunRecord {
  std::string started_at, finished_at;
  std::string command;  // the subcommand: "records", "survey", "explain"
  std::string command_line;
  std::string label;
  std::string writelab_version;
  int document_schema = 0;
  // The host: hostname, kernel, machine, CPU model, CPUs and memory.
  std::string hostname, kernel, machine, cpu_model;
  int64_t cpus = 0;
  int64_t memory_bytes = 0;
  // The target: the user's directory (the first experiment not on a test
  // bed; else the first experiment's).
  std::string target_path, fs_type, mount_options, device, device_model, firmware, scheduler;
  // What `history check` matches runs by: the same machine
  // ("box x86_64 Intel(R) Xeon(R) 2 CPUs 8 GiB") and the same disk
  // ("ext4 on vda QEMU HARDDISK"). The kernel, mount options, scheduler and
  // firmware are kept beside them but left out: they are what a user
  // changes between runs and wants the check to compare across.
  std::string host_fingerprint, target_fingerprint;
  int64_t errors = 0;
};

struct FigureRecord {
  int experiment_index = 0;  // its place among the document's experiments
  std::string experiment, testbed, scheduler;
  int mpi_rank = -1;  // -1: one machine, or the aggregate over ranks
  std::string row, figure, label, unit;
  double median = 0, min = 0, max = 0;
  int n = 0;
  std::vector<double> samples;
};

RunRecord RunRecordOf(const Document& doc);
// The experiment and row name the history keeps a run's noise canary under
// (core/result.h's Canary), after the run's experiments.
inline constexpr const char* kCanaryExperiment = "canary";
// The figures of the document's ok rows, in document order, then its canary's.
std::vector<FigureRecord> FigureRecordsOf(const Document& doc);

// "records" from "writelab records --dir x", "/usr/bin/writelab survey",
// "WRITELAB_FAULT=sync:1:EIO writelab stream": the first word after the
// program that is not an option; "" when there is none.
std::string CommandOf(const std::string& command_line);

// A figure's trial samples as the history stores them: a JSON array of
// numbers ("[12.5,13,11.75]"), null for a value that was not finite.
std::string SamplesToJson(const std::vector<double>& samples);
// The checked reverse: a JSON array of at most kMaxSamples numbers or nulls
// (NaN), nothing else; one line on anything else ("samples: expected a JSON
// array of numbers, not an object"). Fuzzed (tests/fuzz/history_fuzz.cc).
std::expected<std::vector<double>, std::string> SamplesFromJson(const std::string& text);

}  // namespace writelab
