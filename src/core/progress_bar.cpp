// The progress bar (see progress_bar.hpp).
#include "core/progress_bar.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace kiln::core {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long s = std::lround(seconds);
  if (s < 60) return fmt::format("{} s", s);
  return fmt::format("{} min {:02} s", s / 60, s % 60);
}

std::string ProgressBar::line(const std::string& what, double done, double total, double elapsed_s,
                              const std::string& step, int width) {
  const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 1.0;
  const int filled = static_cast<int>(std::floor(fraction * width));
  const std::string left =
      fraction > 0 ? format_duration(elapsed_s * (1.0 - fraction) / fraction) : std::string("?");
  return fmt::format("{} [{}{}] {:3.0f}%  {} elapsed, ~{} left  {}", what, std::string(filled, '#'),
                     std::string(width - filled, '.'), 100.0 * fraction, format_duration(elapsed_s),
                     left, step);
}

ProgressBar::ProgressBar(std::string what, double total, bool enabled, std::FILE* out)
    : what_(std::move(what)),
      total_(total),
      enabled_(enabled),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  terminal_ = enabled_ && isatty(fileno(out_));
}

void ProgressBar::advance(double units, const std::string& step) {
  if (!enabled_) return;
  done_ += units;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string text = line(what_, done_, total_, elapsed, step);
  if (terminal_) {
    std::fprintf(out_, "\r%s\033[K", text.c_str());
  } else {
    const int decile = total_ > 0 ? static_cast<int>(10.0 * done_ / total_) : 10;
    if (decile == last_decile_) return;
    last_decile_ = decile;
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  if (terminal_) std::fprintf(out_, "\n");
  std::fflush(out_);
}

ProgressBar::~ProgressBar() {
  finish();
}

}  // namespace kiln::core
