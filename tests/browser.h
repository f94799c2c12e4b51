// SPDX-License-Identifier: MIT
// Headless Chromium for the report's tests: open a page, read the self-check
// web/report.js writes into it, take a screenshot.
#pragma once

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "harness.h"

namespace writelab::testing {

inline std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    std::string path = std::string("/usr/bin/") + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// Chromium's arguments for a test, under timeout(1): no network, no profile
// of anyone's, no GPU.
inline std::vector<std::string> ChromiumArgs(const std::string& profile) {
  return {"120",
          FindChromium(),
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--user-data-dir=" + profile,
          "--virtual-time-budget=5000"};
}

// The self-check report.js writes into the page: {charts, rendered, errors,
// recommendations_first, unsupported_marked}; null when the script did not run.
inline nlohmann::json CheckOf(const std::string& dom) {
  std::string open = "<pre id=\"writelab-check\">";
  size_t at = dom.find(open);
  if (at == std::string::npos) return nlohmann::json();
  at += open.size();
  return nlohmann::json::parse(dom.substr(at, dom.find("</pre>", at) - at), nullptr, false);
}

// Opens the page and returns its self-check (null on failure, with why).
inline nlohmann::json BrowserCheck(const std::string& html, const std::string& profile,
                                   std::string* why) {
  std::vector<std::string> args = ChromiumArgs(profile);
  args.push_back("--dump-dom");
  args.push_back("file://" + html);
  RunResult d = RunProgram("/usr/bin/timeout", args);
  if (d.exit_code != 0) *why = "chromium exited " + std::to_string(d.exit_code) + ": " + d.err;
  return d.exit_code == 0 ? CheckOf(d.out) : nlohmann::json();
}

// A screenshot of url ("file:///x.html#only=picture-stride") at the size.
inline RunResult Screenshot(const std::string& url, const std::string& png,
                            const std::string& profile, const std::string& size) {
  std::vector<std::string> args = ChromiumArgs(profile);
  args.insert(args.end(),
              {"--window-size=" + size, "--hide-scrollbars", "--screenshot=" + png, url});
  return RunProgram("/usr/bin/timeout", args);
}

// What issue 45 asked of every report page, from its self-check (every
// chart drawn: the page opened with #all): a Findings box before any other
// section, no section title twice, no chart with more than two y axes, no
// table column empty on every row, no number with an exponent.
inline void ExpectReaderFirstPage(const nlohmann::json& check) {
  EXPECT_TRUE(check["findings_first"].get<bool>()) << "no Findings box at the top";
  EXPECT_EQ(check["repeated_titles"], nlohmann::json::array()) << "section titles said twice";
  EXPECT_EQ(check["empty_columns"], nlohmann::json::array()) << "columns empty on every row";
  EXPECT_EQ(check["exponents"], nlohmann::json::array()) << "numbers with an exponent";
  for (const nlohmann::json& c : check["rendered"]) {
    int y = 0;
    for (const nlohmann::json& a : c["axes"]) y += a["id"].get<std::string>().starts_with("y");
    EXPECT_LE(y, 2) << c["title"] << ": " << y << " y axes";
  }
}

}  // namespace writelab::testing
