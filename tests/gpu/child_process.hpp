// Runs a piece of a test in a forked child that is not a rank (no KILN_RANK or NCCL_COMM_ID in its
// environment, so the kiln processes it starts launch their own ranks), for test work that would
// leave the test process unable to fork working ranks afterwards: an NVRTC compile initializes
// the CUDA driver in its caller (nvrtcCompileProgram calls cuInit; H200, 2026-11-29).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <functional>

namespace kiln::testing {

// The child's exit code (body's return value; 1 when it threw; 128 + signal when one ended it),
// or -1 when no child could be forked.
inline int run_in_child_process(const std::function<int()>& body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int code = 1;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child process: %s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(code);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace kiln::testing
