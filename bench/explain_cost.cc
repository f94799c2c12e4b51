// SPDX-License-Identifier: MIT
// What --explain's programs cost per event, measured directly: this process
// makes N calls of each kind with the programs detached, then all attached, and
// prints the nanoseconds each call took more. The kinds:
//   timed call   pwrite of 1 byte to a file on DIR: a call explain.bpf.c
//                times (sys_enter and sys_exit, a map update and delete)
//   other call   getppid: a call every program passes by (sys_enter and
//                sys_exit return at the tgid or call-number check)
//   write request  a 4 KiB O_DIRECT pwrite on DIR's device: the block
//                tracepoints (insert, issue, complete) and the timed call
//   switch pair  a byte sent through a pipe to a thread of this process and
//                back: two sleeps, two wakeups and at least two context
//                switches, which the split's sched_switch and sched_wakeup
//                programs see (the stack is read only in a timed call)
// Usage: explain_cost DIR [N] (root; default N 200000, 20000 direct writes).
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "core/clock.h"
#include "explain/explainer.h"
#include "io/file.h"
#include "telemetry/identify.h"

namespace {

double NsPerCall(int n, auto&& call) {
  const uint64_t t0 = writelab::NowNs();
  for (int i = 0; i < n; ++i) call(i);
  return static_cast<double>(writelab::NowNs() - t0) / n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [N]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const int n = argc > 2 ? std::atoi(argv[2]) : 200000;
  if (auto refusal = writelab::ExplainRefusal()) {
    std::fprintf(stderr, "explain_cost: %s\n", refusal->c_str());
    return 2;
  }
  auto scope = writelab::ExplainScopeOf(dir, writelab::IdentifyTarget(dir).device);
  auto explainer = scope ? writelab::StartExplainer(*scope) : writelab::Unexpected(scope.error());
  if (!explainer) {
    std::fprintf(stderr, "explain_cost: %s\n", explainer.error().Message().c_str());
    return 1;
  }
  // A file of writelab's own (O_EXCL|O_NOFOLLOW), reopened for O_DIRECT
  // through its descriptor, never by name.
  std::string path;
  auto created = writelab::CreateOwnFile(dir, "explain-cost", O_RDWR, &path);
  auto direct_fd = created ? writelab::ReopenFd(created->get(), O_RDWR | O_DIRECT, path)
                           : std::unexpected(created.error());
  if (created) unlink(path.c_str());
  if (!direct_fd) {
    std::fprintf(stderr, "explain_cost: %s\n", direct_fd.error().Message().c_str());
    return 1;
  }
  const int fd = created->get(), dfd = direct_fd->get();
  void* block = nullptr;
  if (posix_memalign(&block, 4096, 4096) != 0) return 1;
  std::memset(block, 'x', 4096);
  if (pwrite(dfd, block, 4096, 0) != 4096) return 1;  // allocated before the runs
  auto timed = [&](int i) { (void)!pwrite(fd, "x", 1, i % 4096); };
  auto other = [](int) { (void)getppid(); };
  auto direct = [&](int) { (void)!pwrite(dfd, block, 4096, 0); };
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return 1;
  std::thread echo([&] {
    char c;
    while (read(there[0], &c, 1) == 1) (void)!write(back[1], &c, 1);
  });
  auto pair = [&](int) {
    char c = 'x';
    (void)!write(there[1], &c, 1);
    (void)!read(back[0], &c, 1);
  };
  struct Kind {
    const char* name;
    int calls;
    double off = 0, on = 0;
  };
  Kind kinds[] = {
      {"timed call", n}, {"other call", n}, {"write request", n / 10}, {"switch pair", n / 4}};
  for (int round = 0; round < 3; ++round) {  // alternate, keep the best of each
    for (int attached = 0; attached < 2; ++attached) {
      if (attached)
        (*explainer)
            ->Attach({writelab::ExplainProbe::kBlock, writelab::ExplainProbe::kThrottle,
                      writelab::ExplainProbe::kConversions, writelab::ExplainProbe::kJournal,
                      writelab::ExplainProbe::kSyncParts});
      double t[] = {NsPerCall(kinds[0].calls, timed), NsPerCall(kinds[1].calls, other),
                    NsPerCall(kinds[2].calls, direct), NsPerCall(kinds[3].calls, pair)};
      if (attached) (*explainer)->Detach();
      for (int k = 0; k < 4; ++k) {
        double& best = attached ? kinds[k].on : kinds[k].off;
        if (round == 0 || t[k] < best) best = t[k];
      }
    }
  }
  close(there[1]);  // the echo thread reads its end and returns
  echo.join();
  std::printf("%-14s %10s %12s %12s %10s\n", "kind", "calls", "detached ns", "attached ns",
              "added ns");
  for (const Kind& k : kinds)
    std::printf("%-14s %10d %12.0f %12.0f %10.0f\n", k.name, k.calls, k.off, k.on, k.on - k.off);
  return 0;
}
