// Where a kiln process's start-up time goes (issue 20's engine speed: a judgement outside the
// judge's own phases cost 3-4 s on an H200). With KILN_TRACE_STARTUP set, trace_point(what)
// prints one line to stderr, "kiln-trace <wall clock, s> <pid> <what>", so that the launcher's and
// its ranks' lines can be merged and differenced. Without it, a call costs one cached getenv.
#pragma once

namespace kiln::core {

bool startup_trace_enabled();
void trace_point(const char* what);

}  // namespace kiln::core
