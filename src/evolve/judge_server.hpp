// The evolution engine's side of the judge server (bench/judge_requests.hpp): starts `kiln bench
// candidate --serve` in the background, hands it each batch, waits for its answer, and starts a
// new one when the last ended (a candidate crashed it), ran past a request's limit (it is then
// killed), or served `max_candidates` (so that what candidates leave behind in the process, such
// as leaked device memory, stays bounded). The server dies with the *thread* that started it
// (PR_SET_PDEATHSIG fires when the forking thread ends): call start_ahead() and judge() from a
// thread that outlives the server, never from a short-lived worker.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "bench/judge_requests.hpp"

namespace kiln::evolve {

class JudgeServer {
 public:
  // `command`: the judge's command line (a /bin/sh command) without --serve, which is added with
  // a fresh folder under `dir` for each server started, its output going to that folder's
  // server.log.
  JudgeServer(std::string command, std::string dir, int max_candidates = 256);
  ~JudgeServer();
  JudgeServer(const JudgeServer&) = delete;
  JudgeServer& operator=(const JudgeServer&) = delete;

  // Hands `candidates` to the server (starting one if none is up) and waits up to `limit_seconds`.
  // True when the server judged the whole batch (each verdict in its JSON); false when it ended
  // first or ran past the limit (then killed): the verdicts written before that stand.
  bool judge(const std::vector<bench::ServedCandidate>& candidates, double limit_seconds);
  // Starts a server now if none is up (or the one up is due to be replaced), without waiting for
  // it: its process start and CUDA context then overlap the batch's compiling, off the GPU turn
  // that judge() holds.
  void start_ahead();

  int starts() const { return starts_; }
  // The folder of the server now (or last) up, e.g. for its server.log.
  const std::string& current_dir() const { return current_dir_; }

 private:
  void start();
  void stop();
  void end_now();  // SIGKILL to the server's process group, reaped
  bool running();  // reaps the server when it has exited

  std::string command_, dir_, current_dir_;
  int max_candidates_;
  pid_t pid_ = -1;
  int sequence_ = 0, served_ = 0, starts_ = 0;
};

}  // namespace kiln::evolve
