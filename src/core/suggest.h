// SPDX-License-Identifier: MIT
// "Did you mean": the closest of the known words to a mistyped one (a
// command, an option, a choice's name), for a usage error's one line.
#pragma once

#include <string>
#include <vector>

namespace writelab {

// The edit distance of a and b, counting a swap of two neighbours as one
// edit (optimal string alignment): "--szie" is 1 from "--size".
size_t EditDistance(const std::string& a, const std::string& b);

// The known word closest to word, if it is close enough to be what was
// meant (at most 1 edit for words up to 4 characters, 2 up to 8, 3 beyond;
// a word that starts another, "surv" of "survey", too); "" otherwise.
std::string Closest(const std::string& word, const std::vector<std::string>& known);

// "; did you mean 'survey'?" or "".
std::string DidYouMean(const std::string& word, const std::vector<std::string>& known);

}  // namespace writelab
