// SPDX-License-Identifier: MIT
// A charge record from the ring: its head and only the entries it filled
// (blame.bpf.h sends no more), read whole; one that says it holds more
// entries than its length carries is refused, not read past its end.
#include "explain/tracer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace writelab {
namespace {

// The bytes the ring delivers for a record of n entries: its head and n.
std::vector<unsigned char> Record(const TraceCharges& e, size_t n) {
  std::vector<unsigned char> bytes(TRACE_CHARGE_HEAD + n * sizeof(trace_charge));
  std::memcpy(bytes.data(), &e, bytes.size());
  return bytes;
}

TraceCharges TwoCulprits() {
  TraceCharges e{};
  e.type = TRACE_EVENT_CHARGE;
  e.kind = TRACE_CHARGE_WINDOW;
  e.dev = 7 << 20;
  e.flush = 1;
  e.t0 = 100, e.t1 = 200;
  e.n = 2;
  e.rest_bytes = 4096;
  e.e[0] = {42, TRACE_CAUSE_PROCESS, 0, 8, 0, 12, 1 << 20, "dd"};
  e.e[1] = {43, TRACE_CAUSE_PROCESS, 0, 8, 0, 13, 8192, "sqlite3"};
  return e;
}

TEST(ReadChargeRecord, ARecordOfItsFilledEntriesIsReadWhole) {
  const TraceCharges sent = TwoCulprits();
  const std::vector<unsigned char> ring = Record(sent, 2);
  ASSERT_LT(ring.size(), sizeof(TraceCharges)) << "the ring carries less than a whole record";
  TraceCharges got;
  got.e[5].bytes = 99;  // whatever was there before is not kept
  ASSERT_TRUE(ReadChargeRecord(ring.data(), ring.size(), got));
  EXPECT_EQ(got.n, 2u);
  EXPECT_EQ(got.dev, sent.dev);
  EXPECT_EQ(got.flush, 1u);
  EXPECT_EQ(got.t1, 200u);
  EXPECT_EQ(got.rest_bytes, 4096u);
  EXPECT_EQ(got.e[0].tgid, 42u);
  EXPECT_EQ(got.e[0].bytes, 1u << 20);
  EXPECT_STREQ(got.e[1].comm, "sqlite3");
  EXPECT_EQ(got.e[1].ino, 13u);
  EXPECT_EQ(got.e[5].bytes, 0u);
}

TEST(ReadChargeRecord, AFlushWithNothingChargedIsItsHeadAlone) {
  TraceCharges sent = TwoCulprits();
  sent.n = 0;
  sent.rest_bytes = 0;
  const std::vector<unsigned char> ring = Record(sent, 0);
  TraceCharges got;
  ASSERT_TRUE(ReadChargeRecord(ring.data(), ring.size(), got));
  EXPECT_EQ(got.n, 0u);
  EXPECT_EQ(got.flush, 1u);
}

TEST(ReadChargeRecord, ARecordWholeAsBeforeIsReadToo) {
  TraceCharges sent = TwoCulprits();
  sent.e[3].bytes = 77;  // a slot emptied after the record was filled: not an entry
  TraceCharges got;
  ASSERT_TRUE(ReadChargeRecord(&sent, sizeof sent, got));
  EXPECT_EQ(got.n, 2u);
  EXPECT_EQ(got.e[1].bytes, 8192u);
  EXPECT_EQ(got.e[3].bytes, 0u) << "only the n entries are read";
}

TEST(ReadChargeRecord, MoreEntriesThanItsLengthHoldsIsRefused) {
  const TraceCharges sent = TwoCulprits();
  const std::vector<unsigned char> ring = Record(sent, 1);  // says 2, carries 1
  TraceCharges got;
  EXPECT_FALSE(ReadChargeRecord(ring.data(), ring.size(), got));
  EXPECT_EQ(got.n, 0u);
  EXPECT_FALSE(ReadChargeRecord(ring.data(), TRACE_CHARGE_HEAD - 1, got)) << "a short head";
  TraceCharges lying = sent;
  lying.n = TRACE_CHARGE_ENTRIES + 1;
  EXPECT_FALSE(ReadChargeRecord(&lying, sizeof lying, got)) << "more than a record can hold";
}

}  // namespace
}  // namespace writelab
