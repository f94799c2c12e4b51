// SPDX-License-Identifier: MIT
// The cost of FindChangePoints (src/history/changepoint.h) on the history
// it is meant for: 50 figures of 1000 runs each, each figure a few levels
// (0 to 5 steps of 2% to 20%, up or down) under normal noise of 3% of its
// level, from a fixed seed. Times the default options and a window of 50,
// one thread, and prints the time and the change points found.
//
//   changepoint_bench [SERIES] [RUNS]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <vector>

#include "history/changepoint.h"

namespace {

// A normal deviate from two uniform ones (Box-Muller): the same numbers on
// every standard library, unlike std::normal_distribution.
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

std::vector<std::vector<double>> MakeSeries(size_t count, size_t runs) {
  std::mt19937_64 rng(20230417);
  std::vector<std::vector<double>> all(count);
  for (auto& series : all) {
    const size_t steps = rng() % 6;
    std::vector<size_t> at(steps);
    for (size_t& a : at) a = 1 + rng() % (runs - 1);
    double level = 1000;
    for (size_t i = 0; i < runs; ++i) {
      for (size_t a : at)
        if (a == i) level *= 1 + (rng() % 2 ? 1 : -1) * (0.02 + 0.18 * (rng() % 1000) / 1000.0);
      series.push_back(level * (1 + 0.03 * Normal(rng)));
    }
  }
  return all;
}

void Time(const char* what, const std::vector<std::vector<double>>& all,
          const writelab::ChangePointOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  size_t found = 0;
  for (const auto& series : all) found += writelab::FindChangePoints(series, options).size();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%-12s %zu series x %zu runs: %.3f s (%.2f ms a series), %zu change points\n", what,
              all.size(), all.empty() ? 0 : all[0].size(), s, 1e3 * s / all.size(), found);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t count = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 50;
  const size_t runs = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1000;
  if (count == 0 || runs < 2) {
    std::fprintf(stderr, "usage: %s [SERIES >= 1] [RUNS >= 2]\n", argv[0]);
    return 2;
  }
  const auto all = MakeSeries(count, runs);
  Time("default", all, {});
  writelab::ChangePointOptions windowed;
  windowed.window = 50;
  Time("window 50", all, windowed);
  return 0;
}
