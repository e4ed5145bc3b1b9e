#include "bench/judge_requests.hpp"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"

namespace kiln::bench {

namespace {

bool plain_field(const std::string& s) {
  return !s.empty() && s.find_first_of("\t\r\n") == std::string::npos;
}

}  // namespace

std::string request_path(const std::string& dir, int sequence) {
  return (std::filesystem::path(dir) / fmt::format("request-{}", sequence)).string();
}

std::string done_path(const std::string& dir, int sequence) {
  return (std::filesystem::path(dir) / fmt::format("done-{}", sequence)).string();
}

std::string stop_path(const std::string& dir) {
  return (std::filesystem::path(dir) / "stop").string();
}

void write_judge_request(const std::string& dir, int sequence,
                         const std::vector<ServedCandidate>& candidates) {
  KILN_REQUIRE(!candidates.empty(), fmt::format("judge request {}: no candidates", sequence));
  std::ostringstream text;
  for (const ServedCandidate& c : candidates) {
    for (const auto& [field, value] : {std::pair<const char*, const std::string&>{"name", c.name},
                                       {"library", c.library},
                                       {"json path", c.json_path}}) {
      KILN_REQUIRE(plain_field(value),
                   fmt::format("judge request {}: candidate {}'s {} '{}' is empty or holds a tab "
                               "or a line break",
                               sequence, c.name, field, value));
    }
    text << c.name << '\t' << c.library << '\t' << c.json_path << '\n';
  }
  const std::string path = request_path(dir, sequence);
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << text.str();
    if (!out.flush()) throw Error(fmt::format("cannot write the judge request {}", partial));
  }
  std::filesystem::rename(partial, path);  // the server sees the request whole or not at all
}

std::optional<std::vector<ServedCandidate>> read_judge_request(const std::string& dir,
                                                               int sequence) {
  const std::string path = request_path(dir, sequence);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::vector<ServedCandidate> candidates;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::size_t first = line.find('\t');
    const std::size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos || line.find('\t', second + 1) != std::string::npos)
      throw Error(fmt::format("{}: malformed line '{}' (name, library, json path)", path, line));
    candidates.push_back({line.substr(0, first), line.substr(first + 1, second - first - 1),
                          line.substr(second + 1)});
  }
  if (candidates.empty()) throw Error(fmt::format("{}: no candidates", path));
  return candidates;
}

bool left_memory_on_device(std::size_t held_after_previous, std::size_t held_after,
                           std::size_t limit) {
  return held_after > held_after_previous && held_after - held_after_previous > limit;
}

bool keep_setup_between_requests(std::size_t free_bytes, std::size_t total_bytes) {
  return total_bytes > 0 && free_bytes >= total_bytes / 3;
}

int serve_judge_requests(const std::string& dir, const ServeOptions& options,
                         const std::function<bool(const ServedCandidate&)>& judge_one,
                         const std::function<void(int sequence)>& waiting,
                         const std::function<void()>& after_request) {
  KILN_REQUIRE(options.idle_seconds > 0 && options.poll_seconds > 0,
               "serve: the idle limit and the poll interval must be > 0 seconds");
  const auto poll = std::chrono::duration<double>(options.poll_seconds);
  for (int sequence = 0;; ++sequence) {
    const auto idle_since = std::chrono::steady_clock::now();
    std::optional<std::vector<ServedCandidate>> request;
    while (!(request = read_judge_request(dir, sequence))) {
      if (std::filesystem::exists(stop_path(dir))) return 0;
      const std::chrono::duration<double> idle = std::chrono::steady_clock::now() - idle_since;
      if (idle.count() > options.idle_seconds) return 0;
      if (waiting) waiting(sequence);
      std::this_thread::sleep_for(poll);
    }
    for (const ServedCandidate& c : *request)
      if (!judge_one(c)) return 3;
    if (after_request) after_request();
    const std::string done = done_path(dir, sequence);
    std::ofstream(done + ".partial", std::ios::trunc) << request->size() << " judged\n";
    std::filesystem::rename(done + ".partial", done);
  }
}

}  // namespace kiln::bench
