// SPDX-License-Identifier: MIT
#include "io/fault_engine.h"

#include "core/run_context.h"

#include <string.h>

#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace writelab {
namespace {

// Forwards everything to the wrapped engine, except the operation the
// injector says to fail. An async engine's failed write completes in the next
// Reap(), as the kernel would report it.
class FaultyEngine final : public WriteEngine {
 public:
  FaultyEngine(std::unique_ptr<WriteEngine> inner, FaultInjector& faults, uint64_t index)
      : inner_(std::move(inner)), faults_(faults), index_(index) {}

  Submit Queue(IoRequest& req) override {
    if (Fire(FaultOp::kWrite)) {
      req.res = -faults_.error();
      if (!inner_->caps().async) return Submit::kCompleted;
      failed_.push_back(&req);
      return Submit::kQueued;
    }
    return Count(inner_->Queue(req));
  }
  Status Commit() override { return Count(inner_->Commit()); }
  int Reap(int min, std::span<IoRequest*> done) override {
    size_t n = 0;
    while (!failed_.empty() && n < done.size()) {
      done[n++] = failed_.back();
      failed_.pop_back();
    }
    if (n > 0) return static_cast<int>(n);
    return Count(inner_->Reap(min, done));
  }
  int Sync(const SyncOp& op) override {
    return Fire(FaultOp::kSync) ? -faults_.error() : Count(inner_->Sync(op));
  }
  int Preallocate(const PreallocOp& op) override {
    return Fire(FaultOp::kPreallocate) ? -faults_.error() : Count(inner_->Preallocate(op));
  }
  int Advise(const AdviseOp& op) override {
    return Fire(FaultOp::kAdvise) ? -faults_.error() : Count(inner_->Advise(op));
  }
  EngineCaps caps() const override { return inner_->caps(); }
  std::string_view name() const override { return inner_->name(); }

 private:
  bool Fire(FaultOp op) { return faults_.Fire(op, index_); }
  template <class T>
  T Count(T result) {
    syscalls_ = inner_->syscalls();
    return result;
  }

  std::unique_ptr<WriteEngine> inner_;
  FaultInjector& faults_;
  uint64_t index_;  // this engine was the index_-th wrapped
  std::vector<IoRequest*> failed_;
};

Result<FaultOp> ParseOp(std::string_view s) {
  if (s == "write") return FaultOp::kWrite;
  if (s == "sync") return FaultOp::kSync;
  if (s == "preallocate") return FaultOp::kPreallocate;
  if (s == "advise") return FaultOp::kAdvise;
  return std::unexpected(
      PlainError("unknown operation '" + std::string(s) + "' (write, sync, preallocate, advise)"));
}

std::optional<uint64_t> ParseNumber(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

Result<int> ParseErrno(std::string_view s) {
  if (auto n = ParseNumber(s); n && *n >= 1 && *n <= 4095) return static_cast<int>(*n);
  for (int e = 1; e < 4096; ++e)
    if (const char* name = strerrorname_np(e); name && s == name) return e;
  return std::unexpected(PlainError("unknown errno '" + std::string(s) + "' (EIO, ENOSPC, 5...)"));
}

}  // namespace

Result<FaultPlan> ParseFaultPlan(std::string_view text) {
  uint64_t engine = 0;
  if (size_t at = text.find('@'); at != text.npos) {
    auto e = ParseNumber(text.substr(at + 1));
    if (!e || *e == 0)
      return std::unexpected(PlainError("E in '" + std::string(text) + "' must be 1 or more"));
    engine = *e;
    text = text.substr(0, at);
  }
  size_t a = text.find(':'), b = a == text.npos ? a : text.find(':', a + 1);
  if (b == text.npos)
    return std::unexpected(PlainError("'" + std::string(text) + "' is not OP:N:ERRNO[@E]"));
  auto op = ParseOp(text.substr(0, a));
  if (!op) return std::unexpected(op.error());
  auto nth = ParseNumber(text.substr(a + 1, b - a - 1));
  if (!nth || *nth == 0)
    return std::unexpected(PlainError("N in '" + std::string(text) + "' must be 1 or more"));
  auto err = ParseErrno(text.substr(b + 1));
  if (!err) return std::unexpected(err.error());
  return FaultPlan{*op, *nth, *err, engine};
}

std::unique_ptr<WriteEngine> FaultInjector::Wrap(std::unique_ptr<WriteEngine> engine) {
  uint64_t index = engines_.fetch_add(1, std::memory_order_relaxed) + 1;
  return std::make_unique<FaultyEngine>(std::move(engine), *this, index);
}

bool FaultInjector::Fire(FaultOp op, uint64_t engine) {
  if (op != plan_.op || (plan_.engine != 0 && engine != plan_.engine)) return false;
  return seen_.fetch_add(1, std::memory_order_relaxed) + 1 == plan_.nth;
}

std::unique_ptr<WriteEngine> RunContext::Engine(std::unique_ptr<WriteEngine> engine) const {
  return faults ? faults->Wrap(std::move(engine)) : std::move(engine);
}

}  // namespace writelab
