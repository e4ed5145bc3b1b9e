// Running a shell command and keeping what it printed (stdout and stderr together): how kiln
// calls nvcc for outside candidates and Nsight Compute for `reduce bench --ncu`.
#pragma once

#include <string>

namespace kiln::core {

// Runs `command` through /bin/sh with stderr merged into stdout, appends the output to
// `output`, and returns the exit status (128 + signal when a signal ended it, -1 when it could
// not start).
int run_command(const std::string& command, std::string& output);

// `text` as one /bin/sh word: single-quoted, each ' written as '\''.
std::string shell_quoted(const std::string& text);

}  // namespace kiln::core
