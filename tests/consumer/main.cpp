// Plans a GEMM + ReduceScatter from kiln's built-in 2xH200 profile with no GPU: the tuner's lookup
// (kiln::tune) and the runtime's plan values (kiln::overlap), from the installed package.
#include <cstdio>

#include "overlap/plan.hpp"
#include "tune/plan_lookup.hpp"

int main() {
  kiln::tune::PlanKey key{"h200-sxm", 2, "rs", "bf16", {4096, 8192, 8192}};
  kiln::tune::PlanLookupOptions options;
  options.cache_path = "/nonexistent/kiln-consumer-plans.json";
  options.profiles.cache_dir = "/nonexistent";
  const kiln::tune::PlanLookup found = kiln::tune::lookup_plan(key, options);
  const kiln::overlap::Plan again =
      kiln::overlap::parse_plan(kiln::overlap::to_string(found.plan), "plan");
  std::printf("plan %s from %s, predicted %.1f us\n", kiln::overlap::to_string(again).c_str(),
              found.source.c_str(), found.predicted_us);
  return found.predicted_us > 0 && found.source.find("built-in") != std::string::npos ? 0 : 1;
}
