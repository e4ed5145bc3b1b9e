#include "comm/local_launcher.hpp"
#include "core/startup_trace.hpp"

#include <arpa/inet.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace kiln::comm {
namespace {

// Whether this process has initialized the CUDA driver; then ranks forked from it cannot use
// CUDA (each one's first call fails with "initialization error"). Asked without initializing
// anything and without linking the driver (kiln runs where there is none): a process that has not
// loaded libcuda has not initialized it, and cuCtxGetCurrent answers CUDA_ERROR_NOT_INITIALIZED (3)
// before cuInit.
bool cuda_driver_initialized() {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (driver == nullptr) return false;
  using CtxGetCurrent = int (*)(void**);
  const auto get_current = reinterpret_cast<CtxGetCurrent>(dlsym(driver, "cuCtxGetCurrent"));
  void* context = nullptr;
  const bool initialized = get_current != nullptr && get_current(&context) == 0;  // CUDA_SUCCESS
  dlclose(driver);
  return initialized;
}

[[noreturn]] void run_child(int rank, int world_size, int ranks_per_gpu, const std::string& comm_id,
                            const std::function<int(const RankInfo&)>& rank_main) {
  // If the launcher dies, its ranks must not live on holding GPUs.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  setenv(kRankVariable, std::to_string(rank).c_str(), 1);
  setenv(kWorldSizeVariable, std::to_string(world_size).c_str(), 1);
  setenv(kLocalRankVariable, std::to_string(rank).c_str(), 1);
  setenv(kRanksPerGpuVariable, std::to_string(ranks_per_gpu).c_str(), 1);
  setenv("NCCL_COMM_ID", comm_id.c_str(), 1);
  RankInfo info;
  info.rank = rank;
  info.world_size = world_size;
  info.local_rank = rank;
  info.local_world_size = world_size;
  info.launcher = "kiln";
  info.ranks_per_gpu = ranks_per_gpu;
  int code = 1;
  core::trace_point("rank forked");
  try {
    code = rank_main(info);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "kiln: rank %d: error: %s\n", rank, error.what());
    code = 1;
  }
  core::trace_point("rank exiting");
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

}  // namespace

int free_loopback_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(fmt::format("socket() failed: {}", std::strerror(errno)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    close(fd);
    throw Error(fmt::format("cannot find a free loopback port: {}", std::strerror(errno)));
  }
  close(fd);
  return ntohs(address.sin_port);
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "ended in an unknown way";
}

int launch_local_ranks(int world_size, const std::function<int(const RankInfo&)>& rank_main,
                       const LaunchOptions& options) {
  if (world_size < 1) throw UsageError(fmt::format("-g {}: need at least one GPU", world_size));
  if (options.ranks_per_gpu < 1 || options.ranks_per_gpu > kMaxRanksPerGpu) {
    throw UsageError(fmt::format("--ranks-per-gpu {}: accepted range 1..{}", options.ranks_per_gpu,
                                 kMaxRanksPerGpu));
  }
  if (cuda_driver_initialized()) {
    throw Error(
        "this process initialized CUDA before forking its ranks, so they cannot use the GPU "
        "(CUDA does not survive fork()); launch ranks from a process that has made no CUDA call "
        "(an NVRTC compile counts: it initializes the driver)");
  }
  const std::string comm_id = fmt::format("127.0.0.1:{}", free_loopback_port());
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids(world_size, -1);
  for (int rank = 0; rank < world_size; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      for (pid_t started : pids) {
        if (started > 0) kill(started, SIGKILL);
      }
      throw Error(fmt::format("fork() for rank {} failed: {}", rank, std::strerror(errno)));
    }
    if (pid == 0) run_child(rank, world_size, options.ranks_per_gpu, comm_id, rank_main);
    pids[rank] = pid;
  }

  const auto started = std::chrono::steady_clock::now();
  int result = 0;
  int running = world_size;
  bool failed = false;
  std::chrono::steady_clock::time_point failure_time;
  bool sent_term = false;
  bool sent_kill = false;
  while (running > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      int rank = -1;
      for (int r = 0; r < world_size; ++r) {
        if (pids[r] == pid) rank = r;
      }
      if (rank < 0) continue;
      pids[rank] = -1;
      --running;
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !sent_term) {
        std::fprintf(stderr, "kiln: rank %d (pid %d) %s\n", rank, static_cast<int>(pid),
                     describe_wait_status(status).c_str());
      }
      if (!ok && !failed) {
        failed = true;
        failure_time = std::chrono::steady_clock::now();
        result = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        if (result == 0) result = 1;
        if (running > 0) {
          std::fprintf(stderr, "kiln: stopping the other %d rank(s) within %.0f s\n", running,
                       options.grace_seconds + 2.0);
        }
      }
      continue;
    }
    if (pid < 0 && errno != EINTR) break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!failed && options.time_limit_seconds > 0 && elapsed > options.time_limit_seconds) {
      std::fprintf(stderr,
                   "kiln: %d rank(s) still running after the %.0f s time limit; "
                   "stopping them\n",
                   running, options.time_limit_seconds);
      failed = true;
      result = 124;
      // Straight to SIGTERM: the grace period is over.
      failure_time = std::chrono::steady_clock::now() -
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(options.grace_seconds));
    }
    if (failed) {
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - failure_time).count();
      if (!sent_term && waited >= options.grace_seconds) {
        for (pid_t child : pids) {
          if (child > 0) kill(child, SIGTERM);
        }
        sent_term = true;
      }
      if (!sent_kill && waited >= options.grace_seconds + 2.0) {
        for (pid_t child : pids) {
          if (child > 0) kill(child, SIGKILL);
        }
        sent_kill = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return result;
}

namespace {

// Why CUDA found no device, or "" when it found some: "no GPU" (no device, or no driver installed
// at all: a CPU machine) is an answer, anything else is a broken installation.
bool means_no_gpu(cudaError_t error) {
  if (error == cudaErrorNoDevice) return true;
  if (error != cudaErrorInsufficientDriver) return false;
  // The runtime says the same when no driver is installed and when the installed one is too old:
  // only the first is a machine without GPUs.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) dlclose(driver);
  return driver == nullptr;
}

}  // namespace

int count_visible_gpus() {
  std::fflush(stdout);
  std::fflush(stderr);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw Error(fmt::format("pipe() failed: {}", std::strerror(errno)));
  const pid_t pid = fork();
  if (pid < 0) throw Error(fmt::format("fork() failed: {}", std::strerror(errno)));
  if (pid == 0) {
    // Counted in a child, so that the caller stays free of CUDA (and can fork ranks).
    close(pipe_fds[0]);
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess && !means_no_gpu(error)) {
      const std::string why =
          std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
      (void)!write(pipe_fds[1], why.data(), why.size());
      _exit(250);
    }
    _exit(error != cudaSuccess ? 0 : (count > 200 ? 200 : count));
  }
  close(pipe_fds[1]);
  std::string why;
  char buffer[256];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof(buffer))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    why.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(fmt::format("waitpid() failed: {}", std::strerror(errno)));
  }
  if (!WIFEXITED(status)) {
    throw Error("counting the GPUs: the CUDA probe process died (signal " +
                std::to_string(WIFSIGNALED(status) ? WTERMSIG(status) : 0) + ")");
  }
  if (WEXITSTATUS(status) == 250) {
    throw Error("CUDA is installed but does not work (" + why +
                "): not the same as having no GPU; fix the driver or the device first");
  }
  return WEXITSTATUS(status);
}

}  // namespace kiln::comm
