// SPDX-License-Identifier: MIT
// FromJson on crafted documents: every defect is one clean error naming the
// JSON path, never a crash, an uncaught exception or a silently wrong value.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "core/document_json.h"
#include "expect_ok.h"
#include "fixture.h"

namespace writelab {
namespace {

using ::writelab::testing::ErrorOf;

using nlohmann::json;

json Fixture() { return json::parse(ToJson(FixedDocument())); }

// FromJson's error on the fixture changed by edit; "" when it was accepted.
template <typename Edit>
std::string ErrorAfter(Edit edit) {
  json j = Fixture();
  edit(j);
  auto doc = FromJson(j.dump());
  return doc ? "" : doc.error();
}

constexpr const char* kCi95 = "experiments[0].rows[0].figures[0].value.ci95";

json& Ci95(json& j) { return j["experiments"][0]["rows"][0]["figures"][0]["value"]["ci95"]; }

TEST(FromJson, Ci95NeedsTwoNumbers) {
  for (json bad : {json::array(), json::array({1}), json::array({"a", "b"}), json::array({1, 2, 3}),
                   json("x"), json::object()}) {
    std::string error = ErrorAfter([&](json& j) { Ci95(j) = bad; });
    EXPECT_EQ(error, std::string(kCi95) + ": expected 2 numbers") << bad.dump();
  }
  EXPECT_EQ(ErrorAfter([](json& j) { Ci95(j) = nullptr; }), "");
  EXPECT_EQ(ErrorAfter([](json& j) { Ci95(j) = json::array({1.5, 2}); }), "");
}

TEST(FromJson, RefusesUnknownRowStatus) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["experiments"][0]["rows"][0]["status"] = "bogus"; }),
            "experiments[0].rows[0].status: unknown status 'bogus' (ok, unsupported or failed)");
  EXPECT_NE(ErrorAfter([](json& j) { j["experiments"][0]["rows"][1]["status"] = 1; }), "");
}

TEST(FromJson, SchemaVersionMustBeExactlyOne) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["schema_version"] = 4294967297ull; }),
            "schema_version: 4294967297 is not 1, the schema this writelab reads");
  EXPECT_EQ(ErrorAfter([](json& j) { j["schema_version"] = 2; }),
            "schema_version: 2 is not 1, the schema this writelab reads");
  EXPECT_EQ(ErrorAfter([](json& j) { j["schema_version"] = 18446744073709551615ull; }),
            "schema_version: 18446744073709551615 is out of range -9223372036854775808 to "
            "9223372036854775807");
  EXPECT_EQ(ErrorAfter([](json& j) { j["schema_version"] = 1.0; }),
            "schema_version: expected an integer, not a number");
  EXPECT_EQ(ErrorAfter([](json& j) { j["schema_version"] = "1"; }),
            "schema_version: expected an integer, not a string");
  EXPECT_EQ(ErrorAfter([](json& j) { j.erase("schema_version"); }),
            "not a writelab result file: JSON without a schema_version");
}

TEST(FromJson, WrongTypesNameTheirPath) {
  struct Case {
    const char* want;
    void (*edit)(json&);
  };
  const Case cases[] = {
      {"experiments[0].rows[0].name: expected a string, not an integer",
       [](json& j) { j["experiments"][0]["rows"][0]["name"] = 5; }},
      {"experiments[0].rows[0].errno: 4096 is out of range 0 to 4095",
       [](json& j) { j["experiments"][0]["rows"][0]["errno"] = 4096; }},
      {"experiments[0].rows[0].errno: -1 is out of range 0 to 4095",
       [](json& j) { j["experiments"][0]["rows"][0]["errno"] = -1; }},
      {"experiments[0].rows[0].figures: expected an array, not an object",
       [](json& j) { j["experiments"][0]["rows"][0]["figures"] = json::object(); }},
      {"experiments[0].rows[0].figures[0].value.n: missing",
       [](json& j) { j["experiments"][0]["rows"][0]["figures"][0]["value"].erase("n"); }},
      {"experiments[0].rows[0].figures[0].value.samples[1]: expected a number, not a string",
       [](json& j) { j["experiments"][0]["rows"][0]["figures"][0]["value"]["samples"][1] = "x"; }},
      {"experiments[0].rows[0].latencies[0].count: -3 is negative",
       [](json& j) { j["experiments"][0]["rows"][0]["latencies"][0]["count"] = -3; }},
      {"experiments[0].rows[0].latencies[0].percentiles[0].value: expected a non-negative "
       "integer, not a number",
       [](json& j) {
         j["experiments"][0]["rows"][0]["latencies"][0]["percentiles"][0]["value"] = 1.5;
       }},
      {"experiments[0].rows[0].series[0].points[1]: expected 2 numbers, one per column",
       [](json& j) { j["experiments"][0]["rows"][0]["series"][0]["points"][1] = {1.0}; }},
      {"experiments[0].rows[0].series[0].trial: -1 is out of range 0 to 1073741823",
       [](json& j) { j["experiments"][0]["rows"][0]["series"][0]["trial"] = -1; }},
      {"experiments[0].params[0].value: expected a boolean, number or string, not an array",
       [](json& j) { j["experiments"][0]["params"][0]["value"] = json::array(); }},
      {"experiments[0].target.rotational: expected true or false, not a string",
       [](json& j) { j["experiments"][0]["target"]["rotational"] = "no"; }},
      {"experiments[0].target.logical_block_size: -512 is negative",
       [](json& j) { j["experiments"][0]["target"]["logical_block_size"] = -512; }},
      {"host.cpus: expected an integer, not a string", [](json& j) { j["host"]["cpus"] = "4"; }},
      {"host.vm.'a b': expected an integer, not a string",
       [](json& j) { j["host"]["vm"]["a b"] = "1"; }},
      {"host.vm.x: expected an integer, not null", [](json& j) { j["host"]["vm"]["x"] = nullptr; }},
      {"experiments: expected an array, not an object",
       [](json& j) { j["experiments"] = json::object(); }},
      {"experiments[0]: expected an object, not an integer",
       [](json& j) { j["experiments"][0] = 7; }},
      {"document: expected an object, not an array", [](json& j) { j = json::array(); }},
  };
  for (const Case& c : cases) EXPECT_EQ(ErrorAfter(c.edit), c.want);
}

TEST(FromJson, LargeParamIntegersAreRefusedNotWrapped) {
  EXPECT_EQ(ErrorAfter([](json& j) { j["experiments"][0]["params"][0]["value"] = UINT64_MAX; }),
            "experiments[0].params[0].value: 18446744073709551615 is out of range "
            "-9223372036854775808 to 9223372036854775807");
}

TEST(FromJson, NotJsonSaysWhereNotWhat) {
  EXPECT_EQ(ErrorOf(FromJson("not json")), "not JSON: syntax error at byte 2");
  EXPECT_EQ(ErrorOf(FromJson("")), "empty: not a writelab result file");
  EXPECT_EQ(ErrorOf(FromJson(" \n")), "empty: not a writelab result file");
  EXPECT_EQ(ErrorOf(FromJson("{\"schema_version\": 1, \"host\": {")),
            "truncated: the JSON ends at byte 31 before the document is complete");
  EXPECT_EQ(ErrorOf(FromJson("{}")), "not a writelab result file: JSON without a schema_version");
  EXPECT_EQ(ErrorOf(FromJson("[1, 2]")), "document: expected an object, not an array");
  // Found by fuzz_document: nlohmann throws out_of_range, not parse_error.
  EXPECT_EQ(ErrorOf(FromJson("{\"schema_version\": 1, \"x\": 85e9934592}")),
            "not JSON: a number out of range");
  EXPECT_EQ(FromJson("{\"schema_version\": 1}").has_value(), true);  // all else defaults
  EXPECT_FALSE(FromJson("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[").has_value());
  EXPECT_EQ(ErrorOf(FromJson(std::string(100000, '[') + std::string(100000, ']'))),
            "refused: nested more than 32 deep, more than a writelab run writes");
}

// Issue 27: a 40 MB file of 10M points took 1.5 GiB to read, and a figure of
// 50k samples made compare bootstrap for minutes. What no run writes is
// refused before the tree is built, naming the limit.
TEST(FromJson, WhatNoRunWritesIsRefusedBeforeItIsBuilt) {
  EXPECT_EQ(ErrorAfter([](json& j) {
              auto& s = j["experiments"][0]["rows"][0]["figures"][0]["value"]["samples"];
              s = json::array();
              for (size_t i = 0; i <= kMaxSamples; ++i) s.push_back(1.0);
            }),
            "experiments[0].rows[0].figures[0].value.samples: 1001 samples, more than the 1000 a "
            "run makes (--rounds is at most 1000)");
  std::string points = "[";
  for (size_t i = 0; i <= kMaxArrayLength; ++i) points += i ? ",0" : "0";
  points += "]";
  EXPECT_EQ(ErrorOf(FromJson("{\"schema_version\": 1, \"x\": " + points + "}")),
            "refused: an array of more than 1000000 entries, more than a writelab run writes");
  std::string many = "{\"schema_version\": 1";
  for (size_t i = 0; i < kMaxDocumentValues / kMaxArrayLength + 1; ++i) {
    many += ", \"x" + std::to_string(i) + "\": [";
    for (size_t k = 0; k < kMaxArrayLength; ++k) many += k ? ",0" : "0";
    many += "]";
  }
  many += "}";
  EXPECT_EQ(ErrorOf(FromJson(many)),
            "refused: more than 16000000 values, more than a writelab run writes");
}

}  // namespace
}  // namespace writelab
