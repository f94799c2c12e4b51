// SPDX-License-Identifier: MIT
#include "core/suggest.h"

#include <algorithm>

namespace writelab {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string Closest(const std::string& word, const std::vector<std::string>& known) {
  const std::string bare = word.substr(
      word.find_first_not_of('-') == std::string::npos ? word.size() : word.find_first_not_of('-'));
  const size_t allowed = bare.size() <= 4 ? 1 : bare.size() <= 8 ? 2 : 3;
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& k : known) {
    if (k == word) return k;
    size_t dist = EditDistance(word, k);
    if (bare.size() >= 3 && k.starts_with(word)) dist = std::min<size_t>(dist, 1);
    if (dist < best_distance) best = k, best_distance = dist;
  }
  return best;
}

std::string DidYouMean(const std::string& word, const std::vector<std::string>& known) {
  const std::string near = Closest(word, known);
  return near.empty() ? "" : "; did you mean '" + near + "'?";
}

}  // namespace writelab
