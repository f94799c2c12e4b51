// SPDX-License-Identifier: MIT
// Reading a result document (FromJson). A document may come from anyone, and
// `report` and `compare` run as root: every field is checked for presence,
// type and range before it is stored, and the first problem ends the read
// with the field's JSON path, e.g.
//   experiments[0].rows[0].figures[0].value.ci95: expected 2 numbers
// Series points must have one value per column, so reporters can index them.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/document_json.h"
#include "core/units.h"

namespace writelab {
namespace {

using nlohmann::json;

// The first problem found. Thrown by Node and caught in FromJson only: it
// never leaves this file. A throw keeps each field's read to one line.
struct BadField {
  std::string path;
  std::string what;
};

const char* TypeName(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    default:
      return "something else";
  }
}

// A value in the document and where it is: its parent and its key or
// index there. The path ("experiments[0].rows") is spelled out only for an
// error. A Node lives on the stack, inside its parent's lifetime.
class Node {
 public:
  explicit Node(const json& j) : j_(j) {}
  Node(const json& j, const Node* parent, std::string_view key)
      : j_(j), parent_(parent), key_(key) {}
  Node(const json& j, const Node* parent, size_t index) : j_(j), parent_(parent), index_(index) {}

  [[noreturn]] void Fail(const std::string& what) const {
    std::string path = Path();
    throw BadField{path.empty() ? "document" : path, what};
  }
  void Expect(bool ok, const char* what) const {
    if (!ok) Fail(std::string("expected ") + what + ", not " + TypeName(j_));
  }

  bool IsNull() const { return j_.is_null(); }
  bool IsPresent(const char* key) const { return Object().contains(key); }

  // A member that must be there.
  Node operator[](const char* key) const {
    auto it = Object().find(key);
    if (it == j_.end()) Node(j_, this, key).Fail("missing");
    return Node(*it, this, key);
  }
  // A member that may be absent (fields added within schema 1): absent, read
  // is not called and the default stays.
  template <typename Read>
  void IfPresent(const char* key, Read read) const {
    if (IsPresent(key)) read((*this)[key]);
  }

  std::string String() const {
    Expect(j_.is_string(), "a string");
    return Printable(j_.get<std::string>());  // a document's words never steer a terminal
  }
  bool Bool() const {
    Expect(j_.is_boolean(), "true or false");
    return j_.get<bool>();
  }
  double Number() const {
    Expect(j_.is_number(), "a number");
    double v = j_.get<double>();
    if (!std::isfinite(v)) Fail("expected a finite number");
    return v;
  }
  int64_t Int(int64_t min = std::numeric_limits<int64_t>::min(),
              int64_t max = std::numeric_limits<int64_t>::max()) const {
    Expect(j_.is_number_integer(), "an integer");
    bool in_range = !(j_.is_number_unsigned() &&
                      j_.get<uint64_t>() > uint64_t{std::numeric_limits<int64_t>::max()}) &&
                    j_.get<int64_t>() >= min && j_.get<int64_t>() <= max;
    if (!in_range)
      Fail(j_.dump() + " is out of range " + std::to_string(min) + " to " + std::to_string(max));
    return j_.get<int64_t>();
  }
  int SmallInt(int min, int max) const { return static_cast<int>(Int(min, max)); }
  uint64_t Uint() const {
    Expect(j_.is_number_integer(), "a non-negative integer");
    if (!j_.is_number_unsigned() && j_.get<int64_t>() < 0) Fail(j_.dump() + " is negative");
    return j_.get<uint64_t>();
  }

  template <typename Read>
  void Each(Read read) const {
    Expect(j_.is_array(), "an array");
    for (size_t i = 0; i < j_.size(); ++i) read(Node(j_[i], this, i));
  }
  const json& raw() const { return j_; }

  std::vector<std::string> Strings() const {
    std::vector<std::string> out;
    Each([&](const Node& n) { out.push_back(n.String()); });
    return out;
  }
  std::vector<double> Numbers() const {
    std::vector<double> out;
    Each([&](const Node& n) { out.push_back(n.Number()); });
    return out;
  }
  template <typename Read>
  void Members(Read read) const {
    for (const auto& [key, value] : Object().items()) read(key, Node(value, this, key));
  }

 private:
  const json& Object() const {
    Expect(j_.is_object(), "an object");
    return j_;
  }
  std::string Path() const {
    if (!parent_) return "";
    std::string path = parent_->Path();
    if (index_) return path + "[" + std::to_string(*index_) + "]";
    // Keys this reader asks for are plain; others (host.vm) are quoted.
    bool plain =
        !key_.empty() && key_.size() <= 40 &&
        key_.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string_view::npos;
    return (path.empty() ? "" : path + ".") + (plain ? std::string(key_) : Quoted(key_));
  }

  const json& j_;
  const Node* parent_ = nullptr;
  std::string_view key_;         // in an object...
  std::optional<size_t> index_;  // ...or an array
};

// Bounds of small integers: they are counted or indexed with, never trusted.
constexpr int kMaxCount = std::numeric_limits<int>::max() / 2;
constexpr int kMaxRanks = 1 << 24;  // ranks of an MPI run

template <typename T, typename Read>
std::vector<T> List(const Node& n, Read read) {
  std::vector<T> out;
  n.Each([&](const Node& item) { out.push_back(read(item)); });
  return out;
}

std::optional<bool> OptionalBool(const Node& n) {
  return n.IsNull() ? std::nullopt : std::optional<bool>(n.Bool());
}
std::optional<uint64_t> OptionalUint(const Node& n) {
  return n.IsNull() ? std::nullopt : std::optional<uint64_t>(n.Uint());
}

Summary ReadSummary(const Node& n) {
  Summary s;
  s.n = n["n"].SmallInt(0, kMaxCount);
  s.median = n["median"].Number();
  s.min = n["min"].Number();
  s.max = n["max"].Number();
  s.mean = n["mean"].Number();
  Node samples = n["samples"];
  samples.Expect(samples.raw().is_array(), "an array");
  if (samples.raw().size() > kMaxSamples)
    samples.Fail(std::to_string(samples.raw().size()) + " samples, more than the " +
                 std::to_string(kMaxSamples) + " a run makes (--rounds is at most 1000)");
  s.samples = samples.Numbers();
  Node ci = n["ci95"];
  if (!ci.IsNull()) {
    const json& c = ci.raw();
    if (!c.is_array() || c.size() != 2 || !c[0].is_number() || !c[1].is_number())
      ci.Fail("expected 2 numbers");
    std::vector<double> bounds = ci.Numbers();  // finite
    s.ci95 = Interval{bounds[0], bounds[1]};
  }
  return s;
}

Figure ReadFigure(const Node& n) {
  return {n["key"].String(), n["label"].String(), n["unit"].String(), n["includes"].String(),
          ReadSummary(n["value"])};
}

// A bucket [low_ns, high_ns, count], low <= high.
auto ReadBucket(Latency& l) {
  return [&l](const Node& b) {
    b.Expect(b.raw().is_array() && b.raw().size() == 3, "[low_ns, high_ns, count]");
    std::vector<uint64_t> v;
    b.Each([&](const Node& n) { v.push_back(n.Uint()); });
    if (v[1] < v[0]) b.Fail("high_ns is below low_ns");
    l.buckets.push_back({v[0], v[1], v[2]});
  };
}

Latency ReadLatency(const Node& n) {
  Latency l;
  l.key = n["key"].String();
  l.label = n["label"].String();
  l.includes = n["includes"].String();
  l.count = n["count"].Uint();
  l.min_ns = n["min"].Uint();
  l.max_ns = n["max"].Uint();
  l.mean_ns = n["mean"].Number();
  l.stddev_ns = n["stddev"].Number();
  n["percentiles"].Each(
      [&](const Node& p) { l.percentiles_ns.emplace_back(p["p"].Number(), p["value"].Uint()); });
  // Added later (docs/results.md): absent in older documents.
  n.IfPresent("percentiles_omitted", [&](const Node& list) {
    list.Each([&](const Node& p) {
      l.percentiles_omitted.emplace_back(p["p"].Number(), p["why"].String());
    });
  });
  n.IfPresent("buckets", [&](const Node& list) { list.Each(ReadBucket(l)); });
  return l;
}

Series ReadSeries(const Node& n) {
  Series s;
  s.key = n["key"].String();
  s.trial = n["trial"].SmallInt(0, kMaxCount);
  s.interval_s = n["interval_s"].Number();
  s.columns = List<Column>(n["columns"], [](const Node& c) {
    return Column{c["name"].String(), c["unit"].String()};
  });
  n["points"].Each([&](const Node& p) {
    s.points.push_back(p.Numbers());
    if (s.points.back().size() != s.columns.size())
      p.Fail("expected " + std::to_string(s.columns.size()) + " numbers, one per column");
  });
  return s;
}

// {experiment, figures, text}; a bare string in documents before 0.3,
// about no experiment in particular.
Recommendation ReadRecommendation(const Node& n) {
  if (n.raw().is_string()) return {"", {}, n.String(), ""};
  Recommendation r{n["experiment"].String(), n["figures"].Strings(), n["text"].String(), ""};
  n.IfPresent("verdict", [&](const Node& v) { r.verdict = v.String(); });
  return r;
}

RowStatus ReadStatus(const Node& n) {
  std::string name = n.String();
  for (RowStatus s : {RowStatus::kOk, RowStatus::kUnsupported, RowStatus::kFailed})
    if (name == RowStatusName(s)) return s;
  n.Fail("unknown status " + Quoted(name) + " (ok, unsupported or failed)");
}

Row ReadRow(const Node& n) {
  Row r;
  r.name = n["name"].String();
  r.status = ReadStatus(n["status"]);
  r.error_code = n["errno"].SmallInt(0, 4095);
  r.message = n["message"].String();
  r.notes = n["notes"].Strings();
  r.figures = List<Figure>(n["figures"], ReadFigure);
  r.latencies = List<Latency>(n["latencies"], ReadLatency);
  r.series = List<Series>(n["series"], ReadSeries);
  return r;
}

Param ReadParam(const Node& n) {
  Param p;
  p.key = n["key"].String();
  p.unit = n["unit"].String();
  Node v = n["value"];
  if (v.raw().is_boolean())
    p.value = v.Bool();
  else if (v.raw().is_number_integer())
    p.value = v.Int();
  else if (v.raw().is_number())
    p.value = v.Number();
  else if (v.raw().is_string())
    p.value = v.String();
  else
    v.Fail(std::string("expected a boolean, number or string, not ") + TypeName(v.raw()));
  return p;
}

Target ReadTarget(const Node& n) {
  Target t;
  n.IfPresent("path", [&](const Node& v) { t.path = v.String(); });
  n.IfPresent("fs_type", [&](const Node& v) { t.fs_type = v.String(); });
  n.IfPresent("mount_point", [&](const Node& v) { t.mount_point = v.String(); });
  n.IfPresent("mount_source", [&](const Node& v) { t.mount_source = v.String(); });
  n.IfPresent("mount_options", [&](const Node& v) { t.mount_options = v.String(); });
  n.IfPresent("device", [&](const Node& v) { t.device = v.String(); });
  n.IfPresent("stack", [&](const Node& v) { t.stack = v.Strings(); });
  n.IfPresent("model", [&](const Node& v) { t.model = v.String(); });
  n.IfPresent("firmware", [&](const Node& v) { t.firmware = v.String(); });
  n.IfPresent("scheduler", [&](const Node& v) { t.scheduler = v.String(); });
  n.IfPresent("schedulers", [&](const Node& v) { t.schedulers = v.Strings(); });
  n.IfPresent("rotational", [&](const Node& v) { t.rotational = OptionalBool(v); });
  n.IfPresent("logical_block_size", [&](const Node& v) { t.logical_block_size = OptionalUint(v); });
  n.IfPresent("physical_block_size",
              [&](const Node& v) { t.physical_block_size = OptionalUint(v); });
  n.IfPresent("max_sectors_kb", [&](const Node& v) { t.max_sectors_kb = OptionalUint(v); });
  n.IfPresent("write_zeroes_max_bytes",
              [&](const Node& v) { t.write_zeroes_max_bytes = OptionalUint(v); });
  n.IfPresent("write_zeroes_unmap_max_bytes",
              [&](const Node& v) { t.write_zeroes_unmap_max_bytes = OptionalUint(v); });
  return t;
}

ExperimentResult ReadExperiment(const Node& n) {
  ExperimentResult e;
  n.IfPresent("name", [&](const Node& v) { e.name = v.String(); });
  n.IfPresent("reproduces", [&](const Node& v) { e.reproduces = v.String(); });
  n.IfPresent("purpose", [&](const Node& v) { e.purpose = v.String(); });
  n.IfPresent("testbed", [&](const Node& v) { e.testbed = v.String(); });
  n.IfPresent("loop_direct_io", [&](const Node& v) { e.loop_direct_io = v.Bool(); });
  n.IfPresent("scheduler", [&](const Node& v) { e.scheduler = v.String(); });
  n.IfPresent("row_label", [&](const Node& v) { e.row_label = v.String(); });
  n.IfPresent("target", [&](const Node& v) { e.target = ReadTarget(v); });
  n.IfPresent("params", [&](const Node& v) { e.params = List<Param>(v, ReadParam); });
  n.IfPresent("table", [&](const Node& v) { e.table = v.Strings(); });
  n.IfPresent("rows", [&](const Node& v) { e.rows = List<Row>(v, ReadRow); });
  n.IfPresent("notes", [&](const Node& v) { e.notes = v.Strings(); });
  n.IfPresent("compare_figure", [&](const Node& v) { e.compare_figure = v.String(); });
  n.IfPresent("compare_targets_as_rows",
              [&](const Node& v) { e.compare_targets_as_rows = v.Bool(); });
  n.IfPresent("rank", [&](const Node& v) { e.rank = v.SmallInt(0, kMaxRanks); });
  n.IfPresent("ranks", [&](const Node& v) { e.ranks = v.SmallInt(1, kMaxRanks); });
  return e;
}

Host ReadHost(const Node& n) {
  Host h;
  h.hostname = n["hostname"].String();
  h.kernel = n["kernel"].String();
  h.version = n["version"].String();
  h.machine = n["machine"].String();
  h.cpus = n["cpus"].SmallInt(0, kMaxCount);
  h.memory_bytes = n["memory_bytes"].Uint();
  n.IfPresent("cpu_model", [&](const Node& v) { h.cpu_model = v.String(); });
  n["vm"].Members([&](const std::string& key, const Node& v) { h.vm[key] = v.Int(); });
  return h;
}

RankInfo ReadRank(const Node& n) {
  RankInfo r;
  r.rank = n["rank"].SmallInt(0, kMaxRanks);
  r.host = ReadHost(n["host"]);
  r.dir = n["dir"].String();
  r.clock_offset_ns = n["clock_offset_ns"].Int();
  r.clock_rtt_ns = n["clock_rtt_ns"].Uint();
  return r;
}

// Fields added within schema 1 (recommendations, test-bed labels...) may be
// absent from older documents: those keep their defaults.
Document ReadDocument(const Node& n) {
  Document d;
  Node version = n["schema_version"];
  if (version.Int() != kSchemaVersion)
    version.Fail(version.raw().dump() + " is not " + std::to_string(kSchemaVersion) +
                 ", the schema this writelab reads");
  d.schema_version = kSchemaVersion;
  n.IfPresent("writelab_version", [&](const Node& v) { d.writelab_version = v.String(); });
  n.IfPresent("command_line", [&](const Node& v) { d.command_line = v.String(); });
  n.IfPresent("label", [&](const Node& v) { d.label = v.String(); });
  n.IfPresent("started_at", [&](const Node& v) { d.started_at = v.String(); });
  n.IfPresent("finished_at", [&](const Node& v) { d.finished_at = v.String(); });
  n.IfPresent("host", [&](const Node& v) { d.host = ReadHost(v); });
  n.IfPresent("experiments",
              [&](const Node& v) { d.experiments = List<ExperimentResult>(v, ReadExperiment); });
  n.IfPresent("errors", [&](const Node& v) { d.errors = v.Strings(); });
  n.IfPresent("recommendations", [&](const Node& v) {
    d.recommendations = List<Recommendation>(v, ReadRecommendation);
  });
  n.IfPresent("mpi", [&](const Node& v) {
    d.mpi_library = v["library"].String();
    d.ranks = List<RankInfo>(v["ranks"], ReadRank);
  });
  n.IfPresent("canary", [&](const Node& v) {
    d.canary.where = v["where"].String();
    d.canary.figures = List<Figure>(v["figures"], ReadFigure);
    d.canary.note = v["note"].String();
  });
  return d;
}

// Counts what a document holds without building it, and stops at the first
// limit it passes. A syntax error ends the count quietly: the parse that
// follows reports it.
class SizeCheck : public nlohmann::json_sax<json> {
 public:
  bool null() override { return Value(); }
  bool boolean(bool) override { return Value(); }
  bool number_integer(number_integer_t) override { return Value(); }
  bool number_unsigned(number_unsigned_t) override { return Value(); }
  bool number_float(number_float_t, const string_t&) override { return Value(); }
  bool string(string_t&) override { return Value(); }
  bool binary(binary_t&) override { return Value(); }
  bool start_object(size_t) override { return Open(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return Close(); }
  bool start_array(size_t) override { return Open(); }
  bool end_array() override { return Close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
  size_t values() const { return values_; }
  const std::string& refused() const { return refused_; }

 private:
  bool Value() {
    if (++values_ > kMaxDocumentValues)
      return Refuse("more than " + std::to_string(kMaxDocumentValues) + " values");
    if (!lengths_.empty() && ++lengths_.back() > kMaxArrayLength)
      return Refuse("an array of more than " + std::to_string(kMaxArrayLength) + " entries");
    return true;
  }
  bool Open() {
    if (!Value()) return false;
    if (lengths_.size() >= kMaxDocumentDepth)
      return Refuse("nested more than " + std::to_string(kMaxDocumentDepth) + " deep");
    lengths_.push_back(0);
    return true;
  }
  bool Close() {
    if (!lengths_.empty()) lengths_.pop_back();
    return true;
  }
  bool Refuse(std::string why) {
    refused_ = std::move(why);
    return false;
  }
  size_t values_ = 0;
  std::vector<size_t> lengths_;  // entries so far of each open array or object
  std::string refused_;
};

}  // namespace

std::expected<Document, std::string> FromJson(const std::string& text,
                                              const std::optional<MemoryRoom>& room) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return std::unexpected("empty: not a writelab result file");
  SizeCheck size;
  json::sax_parse(text, &size);
  if (!size.refused().empty())
    return std::unexpected("refused: " + size.refused() + ", more than a writelab run writes");
  const uint64_t tree = SaturatingAdd(SaturatingMul(size.values(), kBytesPerValue), text.size());
  if (room)
    if (auto big =
            CheckMemory("reading its " + std::to_string(size.values()) + " values", tree, *room))
      return std::unexpected(*big);
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {  // e.what() may quote the input: say where instead
    if (e.byte > text.size())             // the input ended inside the document
      return std::unexpected("truncated: the JSON ends at byte " + std::to_string(text.size()) +
                             " before the document is complete");
    return std::unexpected("not JSON: syntax error at byte " + std::to_string(e.byte));
  } catch (const json::exception&) {  // out_of_range 406: 1e999 overflows a double
    return std::unexpected("not JSON: a number out of range");
  }
  if (j.is_object() && !j.contains("schema_version"))
    return std::unexpected("not a writelab result file: JSON without a schema_version");
  try {
    return ReadDocument(Node(j));
  } catch (const BadField& bad) {
    return std::unexpected(bad.path + ": " + bad.what);
  }
}

}  // namespace writelab
