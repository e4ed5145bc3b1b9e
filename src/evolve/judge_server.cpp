#include "evolve/judge_server.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.hpp"
#include "core/run_command.hpp"

namespace kiln::evolve {

JudgeServer::JudgeServer(std::string command, std::string dir, int max_candidates)
    : command_(std::move(command)), dir_(std::move(dir)), max_candidates_(max_candidates) {
  KILN_REQUIRE(max_candidates_ >= 1, "judge server: max_candidates must be >= 1");
}

JudgeServer::~JudgeServer() {
  stop();
}

void JudgeServer::start() {
  current_dir_ =
      (std::filesystem::path(dir_) / fmt::format("serve-{}-{}", getpid(), starts_)).string();
  std::filesystem::remove_all(current_dir_);
  std::filesystem::create_directories(current_dir_);
  const std::string line = "exec " + command_ + " --serve " + core::shell_quoted(current_dir_);
  const std::string log = current_dir_ + "/server.log";
  // Everything the child needs is made before fork(): after it, only async-signal-safe calls.
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw Error(fmt::format("judge server: fork() failed: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // its own group: stop() ends the launcher and its rank together
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the engine died before the line above
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
      close(fd);
    }
    const int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) dup2(null_in, STDIN_FILENO);
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so that a kill right after fork() finds the group
  pid_ = pid;
  sequence_ = 0;
  served_ = 0;
  ++starts_;
}

bool JudgeServer::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  const pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == 0) return true;
  pid_ = -1;  // exited (or no longer ours)
  return false;
}

void JudgeServer::stop() {
  if (pid_ <= 0) return;
  // Asked first (the server tears its CUDA context down cleanly), then ended.
  std::ofstream(bench::stop_path(current_dir_)) << "stop\n";
  const auto asked = std::chrono::steady_clock::now();
  while (running() && std::chrono::steady_clock::now() - asked < std::chrono::seconds(5))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (pid_ > 0) end_now();
}

void JudgeServer::end_now() {
  if (killpg(pid_, SIGKILL) != 0) kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void JudgeServer::start_ahead() {
  if (pid_ > 0 && served_ >= max_candidates_) stop();
  if (!running()) start();
}

bool JudgeServer::judge(const std::vector<bench::ServedCandidate>& candidates,
                        double limit_seconds) {
  if (candidates.empty()) return true;
  if (pid_ > 0 && served_ >= max_candidates_) stop();
  if (!running()) start();
  const int sequence = sequence_++;
  bench::write_judge_request(current_dir_, sequence, candidates);
  served_ += static_cast<int>(candidates.size());
  const std::string done = bench::done_path(current_dir_, sequence);
  const auto since = std::chrono::steady_clock::now();
  for (;;) {
    if (std::filesystem::exists(done)) return true;
    if (!running()) return std::filesystem::exists(done);  // it may have answered, then ended
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - since;
    if (waited.count() > limit_seconds) {
      end_now();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace kiln::evolve
