// SPDX-License-Identifier: MIT
// What the ranks send one another is JSON: a rank's own result travels as a
// result document (core/document_json.h, read back with its checked reader), the
// rest as small objects of this file's own.
#include "mpi/session.h"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string_view>

#include "core/clock.h"
#include "core/document_json.h"
#include "core/exit_codes.h"
#include "core/units.h"
#include "io/file.h"
#include "io/own_files.h"
#include "mpi/aggregate.h"
#include "port/write_all.h"
#include "telemetry/identify.h"
#include "telemetry/memory_budget.h"

namespace writelab {
namespace {

using nlohmann::json;

// json's parse without exceptions: a discarded value on bad text.
json Parse(const std::string& text) { return json::parse(text, nullptr, false); }

std::string RankName(int rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

// The command line as the ranks must share it: --dir's value aside (the
// same storage may be mounted at different paths), and without the outputs
// only rank 0 writes (--json, --csv, --html/-o, --label).
std::vector<std::string> Comparable(const std::vector<std::string>& args) {
  static constexpr std::string_view kRankZeroOnly[] = {"--json", "--csv", "--html", "-o",
                                                       "--label"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string name = a.substr(0, a.find('='));
    const bool joined = name.size() < a.size();  // --dir=X
    if (std::find(std::begin(kRankZeroOnly), std::end(kRankZeroOnly), name) !=
        std::end(kRankZeroOnly)) {
      if (!joined) ++i;
      continue;
    }
    out.push_back(name == "--dir" ? (joined ? "--dir=DIR" : "--dir") : a);
    if (name == "--dir" && !joined && i + 1 < args.size()) {
      out.push_back("DIR");
      ++i;
    }
  }
  return out;
}

// Rank 0's reason to refuse the start, from every rank's word; "" for none.
std::string StartVerdict(const std::vector<std::string>& words) {
  std::vector<json> all;
  for (const std::string& w : words) all.push_back(Parse(w));
  for (const json& j : all)
    if (!j.is_object()) return "a rank sent what writelab cannot read";
  std::set<std::string> errors;
  for (const json& j : all)
    if (!j["error"].is_null()) errors.insert(j["error"].get<std::string>());
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r]["error"].is_null()) {
      std::string e = all[r]["error"].get<std::string>();
      return errors.size() == 1 && all.size() > 1 &&
                     std::all_of(all.begin(), all.end(),
                                 [](const json& j) { return !j["error"].is_null(); })
                 ? e
                 : "rank " + std::to_string(r) + ": " + e;
    }
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r]["version"] != all[0]["version"])
      return "rank " + std::to_string(r) + " runs writelab " +
             all[r]["version"].get<std::string>() + ", rank 0 " +
             all[0]["version"].get<std::string>() + ": every rank must run the same writelab";
    if (all[r]["args"] != all[0]["args"])
      return "rank " + std::to_string(r) + " was started with other options than rank 0 ('" +
             SpaceJoined(all[r]["args"].get<std::vector<std::string>>()) + "', not '" +
             SpaceJoined(all[0]["args"].get<std::vector<std::string>>()) + "')";
  }
  return "";
}

// The random token of the shared-directory check, in hex.
std::string Token() {
  unsigned char bytes[16] = {};
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    for (size_t i = 0; i < sizeof bytes; ++i)  // no entropy yet: unique is enough here
      bytes[i] = static_cast<unsigned char>((NowNs() ^ static_cast<uint64_t>(getpid())) >> i % 8);
  std::string hex;
  for (unsigned char b : bytes) {
    static constexpr char kHex[] = "0123456789abcdef";
    hex += kHex[b >> 4];
    hex += kHex[b & 15];
  }
  return hex;
}

// What a rank finds at dir/name: "" when it holds token, else why not.
std::string LookFor(const std::string& dir, const std::string& name, const std::string& token) {
  int fd = open((dir + "/" + name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::strerror(errno);
  char buf[64] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) return std::strerror(errno);
  return std::string(buf, static_cast<size_t>(n)) == token ? "" : "it holds another run's token";
}

json SpanJson(const TrialSpan& s) {
  return {{"row", s.row},
          {"trial", s.trial},
          {"role", static_cast<int>(s.role)},
          {"start", s.start_ns},
          {"end", s.end_ns},
          {"bytes", s.bytes},
          {"ops", s.ops},
          {"ops_key", s.ops_key},
          {"origins", s.origins},
          {"written_from_origin", s.written_from_origin}};
}

// A span from another rank, moved onto rank 0's clock.
std::optional<TrialSpan> SpanFrom(const json& j, int64_t offset_ns) {
  if (!j.is_object()) return std::nullopt;
  TrialSpan s;
  try {
    s.row = j.at("row").get<std::string>();
    s.trial = j.at("trial").get<int>();
    int role = j.at("role").get<int>();
    if (role < 0 || role > static_cast<int>(Role::kIdle)) return std::nullopt;
    s.role = static_cast<Role>(role);
    s.start_ns = j.at("start").get<uint64_t>() - static_cast<uint64_t>(offset_ns);
    s.end_ns = j.at("end").get<uint64_t>() - static_cast<uint64_t>(offset_ns);
    s.bytes = j.at("bytes").get<uint64_t>();
    s.ops = j.at("ops").get<uint64_t>();
    s.ops_key = j.at("ops_key").get<std::string>();
    s.written_from_origin = j.at("written_from_origin").get<bool>();
    for (const auto& [key, at] : j.at("origins").items())
      s.origins[key] = at.get<uint64_t>() - static_cast<uint64_t>(offset_ns);
  } catch (const json::exception&) {
    return std::nullopt;
  }
  return s;
}

// What a rank sends after an experiment: a line of JSON about its run, then
// its result as a result document.
std::string Envelope(const Team& team, const ExperimentResult& mine, const Status& status,
                     bool stopped) {
  json spans = json::array();
  for (const TrialSpan& s : team.spans()) spans.push_back(SpanJson(s));
  json latencies = json::array();
  for (const auto& [key, h] : team.histograms()) latencies.push_back({key.first, key.second});
  Document d;
  d.experiments.push_back(mine);
  json head = {{"error", status ? "" : status.error().Message()},
               {"stopped", stopped},
               {"idle", team.role() == Role::kIdle},
               {"host", IdentifyHost().hostname},
               {"spans", spans},
               {"latencies", latencies}};
  return head.dump() + "\n" + ToJson(d);
}

std::optional<RankRun> RunFrom(const std::string& text, int rank, int64_t offset_ns) {
  const size_t nl = text.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  json head = Parse(text.substr(0, nl));
  auto doc = FromJson(text.substr(nl + 1), AvailableMemory());
  if (!head.is_object() || !doc || doc->experiments.size() != 1) return std::nullopt;
  RankRun run;
  run.rank = rank;
  run.result = std::move(doc->experiments.front());
  run.result.rank = rank;
  run.error = head.value("error", std::string());
  run.stopped = head.value("stopped", false);
  run.host = head.value("host", std::string());
  run.idle = head.value("idle", false);
  for (const json& s : head.value("spans", json::array())) {
    auto span = SpanFrom(s, offset_ns);
    if (!span) return std::nullopt;
    run.spans.push_back(std::move(*span));
  }
  return run;
}

// Every rank's histogram of each (row, key) any rank has, merged on rank 0.
std::optional<MergedHistograms> MergeHistograms(Team& team,
                                                const std::vector<std::string>* envelopes) {
  std::set<std::pair<std::string, std::string>> keys;
  if (envelopes)
    for (const std::string& e : *envelopes) {
      json head = Parse(e.substr(0, e.find('\n')));
      if (head.is_object())
        for (const json& k : head.value("latencies", json::array()))
          if (k.is_array() && k.size() == 2 && k[0].is_string() && k[1].is_string())
            keys.insert({k[0].get<std::string>(), k[1].get<std::string>()});
    }
  json list = json::array();
  for (const auto& k : keys) list.push_back({k.first, k.second});
  auto shared = team.Broadcast(list.dump());
  if (!shared) return std::nullopt;
  MergedHistograms merged;
  for (const json& k : Parse(*shared)) {
    std::pair<std::string, std::string> key{k[0].get<std::string>(), k[1].get<std::string>()};
    Histogram h;
    if (auto it = team.histograms().find(key); it != team.histograms().end()) h = it->second;
    if (!team.MergeToRoot(h)) return std::nullopt;
    merged[key] = h;
  }
  return merged;
}

// Rank 0, after an interrupt some rank did not answer: its own rows only.
Status KeepOwn(Team& team, ExperimentResult mine, const Status& status, Document& doc) {
  mine.rank = 0;
  std::string missing = "1";
  if (team.size() > 2) missing += "-" + std::to_string(team.size() - 1);
  mine.notes.push_back("only rank 0's own rows: ranks " + missing +
                       " did not answer after the interrupt");
  doc.experiments.push_back(std::move(mine));
  return status ? Status(std::unexpected(team.StopReason())) : status;
}

}  // namespace

Status RunOnRanks(Team& team, const RunContext& ctx, Document& doc, const RankExperiment& run) {
  team.BeginExperiment();
  ExperimentResult mine;
  const Status status = run(ctx, mine);
  // A rank that stopped at a step took it with the others; one that failed
  // on its own takes the step the others wait in, and stops them there.
  // (fsync's phases take that step themselves.) Its envelope says it failed
  // on its own, so that the errors line names it and its reason.
  if (!team.stopped()) team.Step(!status && !ctx.Interrupted());
  if (team.broken()) return team.rank() == 0 ? KeepOwn(team, mine, status, doc) : status;
  const bool only_stopped = team.stopped_by_another() || (!status && ctx.Interrupted());
  auto all = team.Gather(Envelope(team, mine, status, only_stopped));
  auto merged = MergeHistograms(team, all && team.rank() == 0 ? &*all : nullptr);
  if (team.rank() != 0) return status;
  if (!all || !merged) return KeepOwn(team, mine, status, doc);
  std::vector<RankRun> runs;
  for (size_t r = 0; r < all->size(); ++r) {
    const int64_t offset = r < doc.ranks.size() ? doc.ranks[r].clock_offset_ns : 0;
    auto one = RunFrom((*all)[r], static_cast<int>(r), offset);
    if (!one)
      return std::unexpected(
          PlainError("rank " + std::to_string(r) + " sent a result writelab cannot read"));
    runs.push_back(std::move(*one));
  }
  const std::optional<std::string> failure = FirstRankFailure(runs);
  std::erase_if(runs, [](const RankRun& one) { return one.idle; });  // sat this one out
  AlignSeries(runs);
  doc.experiments.push_back(AggregateRanks(runs, *merged));
  for (RankRun& one : runs) doc.experiments.push_back(std::move(one.result));
  if (failure) return std::unexpected(PlainError(*failure));
  for (const RankRun& one : runs)
    if (!one.error.empty()) return std::unexpected(PlainError(one.error));  // interrupted
  return {};
}

std::optional<int> AgreeToStart(Team& team, const std::optional<std::string>& usage_error,
                                const std::vector<std::string>& args) {
  json mine = {{"error", usage_error ? json(*usage_error) : json(nullptr)},
               {"version", WRITELAB_VERSION},
               {"args", Comparable(args)}};
  auto all = team.Gather(mine.dump());
  if (!all) return kExitRunFailed;
  auto verdict = team.Broadcast(team.rank() == 0 ? StartVerdict(*all) : "");
  if (!verdict) return kExitRunFailed;
  if (verdict->empty()) return std::nullopt;
  if (team.rank() == 0) {
    std::fprintf(stderr, "writelab: %s\n", verdict->c_str());
    std::fflush(stderr);
  }
  return kExitUsage;
}

std::optional<std::string> MeetRanks(Team& team, const std::string& dir, Document& doc) {
  // Rank 0's check file, made as every file of writelab's own.
  std::string path, offer;
  if (team.rank() == 0) {
    const std::string token = Token();
    auto fd = CreateOwnFile(dir, "mpi-check", O_WRONLY, &path);
    int rc = fd ? WriteAll(fd->get(), token.data(), token.size()) : 0;
    if (fd && rc == 0 && fsync(fd->get()) != 0) rc = -errno;
    if (fd && rc == 0)
      offer = json{{"name", path.substr(path.rfind('/') + 1)}, {"token", token}}.dump();
    else
      offer =
          json{{"error", fd ? ErrnoError(-rc, "write " + path).Message() : fd.error().Message()}}
              .dump();
  }
  auto offered = team.Broadcast(offer);
  if (!offered) return "the ranks could not be reached";
  json o = Parse(*offered);
  if (!o.is_object() || o.contains("error")) {  // every rank has this same answer
    if (!path.empty()) RemoveOwnFile(path);
    std::string why = o.is_object() ? o["error"].get<std::string>() : "no answer";
    return "rank 0 could not write its check file in " + dir + ": " + why;
  }
  std::string found;
  if (team.rank() != 0)
    found = LookFor(dir, o["name"].get<std::string>(), o["token"].get<std::string>());
  Document mine;
  mine.host = IdentifyHost();
  auto all = team.Gather(json{{"found", found}, {"host", mine.host.hostname}, {"dir", dir}}.dump() +
                         "\n" + ToJson(mine));
  if (team.rank() == 0 && !path.empty()) RemoveOwnFile(path);
  const std::vector<ClockOffset> clocks = team.MeasureClocks();
  std::string verdict;
  if (team.rank() == 0 && all) {
    doc.mpi_library = team.library();
    for (size_t r = 0; r < all->size(); ++r) {
      const std::string& text = (*all)[r];
      json j = Parse(text.substr(0, text.find('\n')));
      auto d = FromJson(text.substr(text.find('\n') + 1), AvailableMemory());
      if (!j.is_object() || !d) {
        verdict = "rank " + std::to_string(r) + " sent what writelab cannot read";
        break;
      }
      std::string why = j["found"].get<std::string>();
      if (!why.empty() && verdict.empty())
        verdict = "--dir " + dir +
                  " is not shared: " + RankName(static_cast<int>(r), j["host"].get<std::string>()) +
                  " does not see rank 0's " + o.value("name", std::string("check file")) +
                  " in its " + j["dir"].get<std::string>() + " (" + why +
                  "); under MPI every rank writes in the same directory";
      RankInfo info{static_cast<int>(r), d->host, j["dir"].get<std::string>(), 0, 0};
      if (r < clocks.size()) {
        info.clock_offset_ns = clocks[r].offset_ns;
        info.clock_rtt_ns = clocks[r].rtt_ns;
      }
      doc.ranks.push_back(std::move(info));
    }
  }
  auto shared = team.Broadcast(verdict);
  if (!shared) return "the ranks could not be reached";
  if (!shared->empty()) return *shared;
  return std::nullopt;
}

int ShareExitCode(Team& team, int code) {
  team.WaitForRankZero();
  auto shared = team.Broadcast(std::to_string(code));
  if (!shared) return code == 0 ? kExitRunFailed : code;
  return std::atoi(shared->c_str());
}

}  // namespace writelab
