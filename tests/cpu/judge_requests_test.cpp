// bench/judge_requests: the judge server's file protocol and loop. A request reads back as
// written, fields that would break a line are refused, and the loop judges requests in order,
// answers each with a done file, and ends on stop, on the idle limit, or (exit 3, no answer) when
// a candidate leaves the process unable to go on.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/judge_requests.hpp"
#include "core/error.hpp"

namespace kiln::bench {
namespace {

std::string fresh_dir(const char* name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

TEST(JudgeRequests, ReadBackAsWritten) {
  const std::string dir = fresh_dir("kiln_judge_requests_roundtrip");
  EXPECT_FALSE(read_judge_request(dir, 0).has_value());
  const std::vector<ServedCandidate> written = {{"g-1", "/x/g-1.so", "/x/g-1.json"},
                                                {"g 2", "/x y/g 2.so", "/x y/g 2.json"}};
  write_judge_request(dir, 0, written);
  const auto read = read_judge_request(dir, 0);
  ASSERT_TRUE(read.has_value());
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ((*read)[1].name, "g 2");
  EXPECT_EQ((*read)[1].library, "/x y/g 2.so");
  EXPECT_EQ((*read)[1].json_path, "/x y/g 2.json");
  EXPECT_FALSE(std::filesystem::exists(request_path(dir, 0) + ".partial"));
  EXPECT_FALSE(read_judge_request(dir, 1).has_value());
}

TEST(JudgeRequests, RefusesFieldsThatBreakALine) {
  const std::string dir = fresh_dir("kiln_judge_requests_refused");
  EXPECT_THROW(write_judge_request(dir, 0, {{"a\tb", "l.so", "j.json"}}), UsageError);
  EXPECT_THROW(write_judge_request(dir, 0, {{"a", "l\n.so", "j.json"}}), UsageError);
  EXPECT_THROW(write_judge_request(dir, 0, {{"a", "l.so", ""}}), UsageError);
  EXPECT_THROW(write_judge_request(dir, 0, {}), UsageError);
  EXPECT_FALSE(std::filesystem::exists(request_path(dir, 0)));
  std::ofstream(request_path(dir, 1)) << "only-a-name\n";
  EXPECT_THROW(read_judge_request(dir, 1), Error);
}

TEST(JudgeRequests, ServesInOrderUntilStop) {
  const std::string dir = fresh_dir("kiln_judge_requests_serve");
  std::vector<std::string> judged;
  int answered_before_next = 0;
  std::thread client([&] {
    write_judge_request(dir, 0, {{"a", "a.so", "a.json"}, {"b", "b.so", "b.json"}});
    while (!std::filesystem::exists(done_path(dir, 0)))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ++answered_before_next;
    write_judge_request(dir, 1, {{"c", "c.so", "c.json"}});
    while (!std::filesystem::exists(done_path(dir, 1)))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::ofstream(stop_path(dir)) << "stop\n";
  });
  int waits = 0;
  const int code = serve_judge_requests(
      dir, {},
      [&](const ServedCandidate& c) {
        judged.push_back(c.name);
        return true;
      },
      [&](int) { ++waits; },
      [&] {
        // Called once a request is judged, before its answer.
        judged.push_back("|");
        EXPECT_FALSE(std::filesystem::exists(done_path(dir, judged.size() == 3 ? 0 : 1)));
      });
  client.join();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(judged, (std::vector<std::string>{"a", "b", "|", "c", "|"}));
  EXPECT_EQ(answered_before_next, 1);
  EXPECT_GT(waits, 0);  // it polled (a watchdog's progress) while no request was there
}

TEST(JudgeRequests, BrokenProcessEndsWithoutAnAnswer) {
  const std::string dir = fresh_dir("kiln_judge_requests_broken");
  write_judge_request(
      dir, 0,
      {{"ok", "ok.so", "ok.json"}, {"breaks", "b.so", "b.json"}, {"never", "n.so", "n.json"}});
  std::vector<std::string> judged;
  const int code = serve_judge_requests(
      dir, {},
      [&](const ServedCandidate& c) {
        judged.push_back(c.name);
        return c.name != "breaks";
      },
      nullptr);
  EXPECT_EQ(code, 3);
  EXPECT_EQ(judged, (std::vector<std::string>{"ok", "breaks"}));
  EXPECT_FALSE(std::filesystem::exists(done_path(dir, 0)));
}

// A server keeps its set-up while a third of the GPU's memory stays free (room for the largest
// KernelBench set-up, 25 GB, on an 80 GB H100 and a 141 GB H200), else frees it.
TEST(JudgeRequests, KeepsTheSetUpWhileAThirdOfMemoryIsFree) {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  EXPECT_TRUE(keep_setup_between_requests(60 * kGiB, 141 * kGiB));
  EXPECT_TRUE(keep_setup_between_requests(47 * kGiB, 141 * kGiB));
  EXPECT_FALSE(keep_setup_between_requests(46 * kGiB, 141 * kGiB));
  EXPECT_TRUE(keep_setup_between_requests(27 * kGiB, 80 * kGiB));  // 25 GB still fit after it
  EXPECT_FALSE(keep_setup_between_requests(26 * kGiB, 80 * kGiB));
  EXPECT_FALSE(keep_setup_between_requests(0, 0));  // no answer from the device: free it
}

// A candidate that left more than the limit allocated in the judge's process ends the server;
// less (a library's handles) and memory given back do not.
TEST(JudgeRequests, ACandidateThatLeftMemoryOnTheDeviceIsNoticed) {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  EXPECT_TRUE(left_memory_on_device(20 * kGiB, 24 * kGiB, kLeftOnDeviceLimit));
  EXPECT_FALSE(left_memory_on_device(20 * kGiB, 20 * kGiB + kGiB / 2, kLeftOnDeviceLimit));
  EXPECT_FALSE(left_memory_on_device(20 * kGiB, 21 * kGiB, kLeftOnDeviceLimit));  // at the limit
  EXPECT_FALSE(left_memory_on_device(20 * kGiB, 10 * kGiB, kLeftOnDeviceLimit));  // given back
}

TEST(JudgeRequests, EndsAfterTheIdleLimit) {
  const std::string dir = fresh_dir("kiln_judge_requests_idle");
  ServeOptions o;
  o.idle_seconds = 0.05;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(serve_judge_requests(
                dir, o, [](const ServedCandidate&) { return true; }, nullptr),
            0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  o.idle_seconds = 0;
  EXPECT_THROW(serve_judge_requests(
                   dir, o, [](const ServedCandidate&) { return true; }, nullptr),
               UsageError);
}

}  // namespace
}  // namespace kiln::bench
