// SPDX-License-Identifier: MIT
// StreamWriter on real files: every method writes exactly the bytes given,
// whatever the sizes of the appends, and says which method it used.
#include "writelab/stream_writer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "expect_ok.h"

namespace writelab {
namespace {

std::string TestPath(const char* name) {
  return "/var/tmp/writelab-streamwriter-" + std::string(name) + "-" + std::to_string(getpid());
}

std::vector<std::byte> Pattern(size_t n) {
  std::vector<std::byte> v(n);
  std::mt19937 rng(11);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

std::vector<std::byte> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> v(s.size());
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

class StreamWriterMethod : public ::testing::TestWithParam<StreamMethod> {};

TEST_P(StreamWriterMethod, WritesExactlyTheBytesGiven) {
  std::string path = TestPath(StreamMethodName(GetParam()));
  StreamWriterOptions options;
  options.preference = {GetParam()};
  options.window_bytes = 64 << 10;  // small window: many window steps
  auto w = StreamWriter::Open(path, options);
  ASSERT_OK(w);
  // Uneven appends, and a total that is not a multiple of 4096.
  auto data = Pattern((3 << 20) + 1234);
  size_t off = 0;
  std::mt19937 rng(5);
  Status st;
  while (off < data.size() && st) {
    size_t n = std::min<size_t>(data.size() - off, 1 + rng() % (200 << 10));
    st = w->Append({data.data() + off, n});
    off += n;
  }
  if (!st && w->attempts().size() == 1 && w->attempts()[0].error != 0) {
    std::filesystem::remove(path);
    GTEST_SKIP() << StreamMethodName(GetParam()) << " refused here: " << st.error().Message();
  }
  ASSERT_OK(st);
  ASSERT_TRUE(w->Finish()) << "finish";
  EXPECT_EQ(w->method(), GetParam());
  EXPECT_EQ(w->bytes_appended(), data.size());
  EXPECT_EQ(ReadAll(path), data);
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, StreamWriterMethod,
                         ::testing::Values(StreamMethod::kDontcache, StreamMethod::kWindowDrop,
                                           StreamMethod::kDirect, StreamMethod::kPaced),
                         [](const auto& info) {
                           std::string n = StreamMethodName(info.param);
                           std::erase(n, '-');
                           return n;
                         });

TEST(StreamWriter, FallsBackAndSaysWhy) {
  if (!std::filesystem::exists("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  // tmpfs takes no RWF_DONTCACHE (it has no writeback to uncache).
  std::string path = "/dev/shm/writelab-streamwriter-fallback-" + std::to_string(getpid());
  auto w = StreamWriter::Open(path);
  ASSERT_TRUE(w.has_value());
  auto data = Pattern(1 << 20);
  ASSERT_TRUE(w->Append(data));
  ASSERT_TRUE(w->Finish());
  if (w->method() == StreamMethod::kDontcache) {
    std::filesystem::remove(path);
    GTEST_SKIP() << "this kernel accepts RWF_DONTCACHE on tmpfs";
  }
  ASSERT_GE(w->attempts().size(), 2u);
  EXPECT_EQ(w->attempts()[0].method, StreamMethod::kDontcache);
  EXPECT_NE(w->attempts()[0].error, 0);
  EXPECT_NE(w->choice().find("dontcache refused"), std::string::npos) << w->choice();
  EXPECT_EQ(ReadAll(path), data);
  std::filesystem::remove(path);
}

TEST(StreamWriter, RejectsBadOptions) {
  StreamWriterOptions o;
  o.preference.clear();
  EXPECT_FALSE(StreamWriter::Open(TestPath("bad"), o).has_value());
  o = {};
  o.direct_alignment = 3000;
  EXPECT_FALSE(StreamWriter::Open(TestPath("bad"), o).has_value());
  o = {};
  o.pace_target_ns = 0;
  EXPECT_FALSE(StreamWriter::Open(TestPath("bad"), o).has_value());
  std::filesystem::remove(TestPath("bad"));
  EXPECT_FALSE(StreamWriter::Open("/nonexistent/dir/file").has_value());
}

}  // namespace
}  // namespace writelab
