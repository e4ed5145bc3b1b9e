// A judge that stays up between batches (issue 20's engine speed): `kiln bench candidate --serve
// DIR` judges request after request from DIR in one process, so that a search's generations share
// one process start, CUDA context, communicator and problem set-up instead of paying them per
// batch (3-4 s a batch on an H200, most of a small problem's judging). The protocol is files, so
// that either side can die without the other blocking on a pipe:
//   DIR/request-N  the client's N-th batch (N = 0, 1, ...), one candidate per line:
//                  name <TAB> library <TAB> json path; written whole (renamed into place)
//   DIR/done-N     the server's answer: the batch was judged through (each verdict is in its
//                  JSON); absent when the server ended during it (a candidate broke the process)
//   DIR/stop       the client's request to end
// The server takes requests in order, waits (polling) when there is none, and ends on `stop`, after
// `idle_seconds` without a request, or when a candidate leaves it unable to go on.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::bench {

struct ServedCandidate {
  std::string name;       // the candidate's name in the report (its source's stem)
  std::string library;    // the compiled shared library
  std::string json_path;  // where its verdict goes
};

std::string request_path(const std::string& dir, int sequence);
std::string done_path(const std::string& dir, int sequence);
std::string stop_path(const std::string& dir);

// Writes request `sequence` atomically (a temporary file renamed into place). Throws
// kiln::UsageError naming the field when a name or path holds a tab or a line break, or when the
// batch is empty.
void write_judge_request(const std::string& dir, int sequence,
                         const std::vector<ServedCandidate>& candidates);
// Request `sequence`, or nullopt while it is not there. Throws kiln::Error for a malformed line.
std::optional<std::vector<ServedCandidate>> read_judge_request(const std::string& dir,
                                                               int sequence);

struct ServeOptions {
  double idle_seconds = 300.0;  // end after this long without a request
  double poll_seconds = 0.002;  // how often the server looks for a request
};

// With several servers up (`--serve-release-setup`), whether one keeps its problem's set-up for
// the next request, given the GPU's free and total memory after this one: while a third stays free,
// room for any other server's next set-up (KernelBench's largest take 25 GB: under a third of an
// H100's 80 GB). Setting a KernelBench problem up again for every request was two thirds of the
// judging time of a 26-problem set run, 8 at once (148 of 222 s, H200, 2026-11-29).
bool keep_setup_between_requests(std::size_t free_bytes, std::size_t total_bytes);

// Whether a judged candidate left device memory allocated in the judge's process: the memory this
// process holds after it (its library unloaded; bench/process_device_memory, the driver's
// per-process figure) is more than `limit` above what it held after the candidate before it, the
// problem's set-up the same. A generated matmul kept its split operands in a static workspace
// that no unload freed (4 GB a batched-matmul candidate), so a judge server that took candidate
// after candidate filled the GPU, and every judge on it then failed at its set-up (H200,
// 2026-11-29: 42 judgements in one stretch). Such a server ends after that candidate (its verdict
// stands) and the next request starts another. The device's free memory is no measure of this:
// the other judge servers on the GPU set up and free tens of GB meanwhile.
bool left_memory_on_device(std::size_t held_after_previous, std::size_t held_after,
                           std::size_t limit);
// The limit a judge applies (a candidate's own cuBLAS or CUTLASS handles take tens of MB).
inline constexpr std::size_t kLeftOnDeviceLimit = std::size_t{1} << 30;

// The server's loop. `judge_one` judges a candidate and returns false when the process cannot go
// on (the request then gets no done file); `waiting` is called at every poll (a watchdog's
// progress), `after_request` (may be empty) once a request is judged, before its done file.
// Returns 0 after `stop` or the idle limit, 3 when judge_one returned false.
int serve_judge_requests(const std::string& dir, const ServeOptions& options,
                         const std::function<bool(const ServedCandidate&)>& judge_one,
                         const std::function<void(int sequence)>& waiting,
                         const std::function<void()>& after_request = nullptr);

}  // namespace kiln::bench
