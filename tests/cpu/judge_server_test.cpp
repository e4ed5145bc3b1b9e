// evolve::JudgeServer against a stand-in server (a shell script speaking the request protocol, so
// no GPU is needed): batches go to one process kept up between them; a server that dies during a
// batch, or hangs past the limit (then killed, with what it started), is replaced at the next
// batch; a server is replaced after max_candidates; and none outlives the client.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/judge_requests.hpp"
#include "evolve/judge_server.hpp"

namespace kiln::evolve {
namespace {

struct Fixture {
  std::string dir, command;
};

// The stand-in: judges a candidate by writing {"pid": its own pid} to the candidate's JSON;
// a candidate named "crash" ends it (exit 3), one named "hang" makes it sleep.
Fixture make_fixture(const char* name) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string script = (dir / "stand_in_server.sh").string();
  std::ofstream(script) << R"(dir=$2; i=0; tab=$(printf '\t')
while [ ! -e "$dir/stop" ]; do
  if [ -e "$dir/request-$i" ]; then
    while IFS="$tab" read -r name lib json; do
      [ "$name" = crash ] && exit 3
      [ "$name" = hang ] && sleep 100
      echo "{\"pid\": $$}" > "$json"
    done < "$dir/request-$i"
    echo judged > "$dir/done-$i"; i=$((i+1))
  fi
  sleep 0.005
done
)";
  return {dir.string(), "sh '" + script + "'"};
}

bench::ServedCandidate candidate(const Fixture& f, const std::string& name) {
  return {name, f.dir + "/" + name + ".so", f.dir + "/" + name + ".json"};
}

// The pid the stand-in wrote for a candidate, or -1 when it wrote nothing.
int judged_by(const Fixture& f, const std::string& name) {
  std::ifstream in(f.dir + "/" + name + ".json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find(':');
  return at == std::string::npos ? -1 : std::stoi(text.substr(at + 1));
}

bool alive(int pid) {
  return pid > 0 && kill(pid, 0) == 0;
}

TEST(JudgeServer, OneProcessForSeveralBatches) {
  const Fixture f = make_fixture("kiln_judge_server_batches");
  int pid = -1;
  {
    JudgeServer server(f.command, f.dir);
    EXPECT_TRUE(server.judge({candidate(f, "a"), candidate(f, "b")}, 30));
    EXPECT_TRUE(server.judge({candidate(f, "c")}, 30));
    EXPECT_EQ(server.starts(), 1);
    pid = judged_by(f, "a");
    EXPECT_GT(pid, 0);
    EXPECT_EQ(judged_by(f, "b"), pid);
    EXPECT_EQ(judged_by(f, "c"), pid);
    EXPECT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));  // asked to stop with the client
}

TEST(JudgeServer, ACrashEndsTheBatchAndTheNextStartsAnother) {
  const Fixture f = make_fixture("kiln_judge_server_crash");
  JudgeServer server(f.command, f.dir);
  EXPECT_FALSE(
      server.judge({candidate(f, "before"), candidate(f, "crash"), candidate(f, "after")}, 30));
  EXPECT_GT(judged_by(f, "before"), 0);  // verdicts written before the crash stand
  EXPECT_EQ(judged_by(f, "after"), -1);
  EXPECT_TRUE(server.judge({candidate(f, "next")}, 30));
  EXPECT_EQ(server.starts(), 2);
  EXPECT_NE(judged_by(f, "next"), judged_by(f, "before"));
}

TEST(JudgeServer, AHangIsKilledAtTheLimit) {
  const Fixture f = make_fixture("kiln_judge_server_hang");
  JudgeServer server(f.command, f.dir);
  EXPECT_TRUE(server.judge({candidate(f, "first")}, 30));
  const int first = judged_by(f, "first");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(server.judge({candidate(f, "hang")}, 0.5));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(alive(first));
  EXPECT_TRUE(server.judge({candidate(f, "then")}, 30));
  EXPECT_EQ(server.starts(), 2);
}

TEST(JudgeServer, ReplacedAfterMaxCandidates) {
  const Fixture f = make_fixture("kiln_judge_server_max");
  JudgeServer server(f.command, f.dir, 2);
  EXPECT_TRUE(server.judge({candidate(f, "one"), candidate(f, "two")}, 30));
  EXPECT_TRUE(server.judge({candidate(f, "three")}, 30));
  EXPECT_EQ(server.starts(), 2);
  EXPECT_NE(judged_by(f, "three"), judged_by(f, "one"));
  EXPECT_FALSE(alive(judged_by(f, "one")));
}

}  // namespace
}  // namespace kiln::evolve
