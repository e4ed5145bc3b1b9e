// Optimisation strategies as explicit objects (issue 20, after cuPilot's strategy-coordinated
// evolution): the unit of variation of kiln's evolution engine. A strategy names one idea, says
// which kernel families it applies to and which roofline resource it addresses, carries its knobs
// (discrete values) and the strategies it cannot be combined with. Strategies of one `group`
// exclude each other (a kernel has one load path, one work mapping, ...); a family requires
// one strategy from each of its required groups. Host-only values: the generators that turn a
// genome into CUDA source read them.
#pragma once

#include <string>
#include <vector>

namespace kiln::evolve {

// The kernel families the generators cover (the kb1 problem set maps onto them).
enum class Family { kMap, kReduceAxis, kPooling, kScan, kMatmul, kAttention };
inline constexpr int kFamilies = 6;
std::string family_name(Family family);        // "map", "reduce-axis", ...
Family parse_family(const std::string& text);  // throws kiln::UsageError naming the accepted ones

// The roofline resource a strategy addresses (guides which strategies to try next).
enum class Resource { kHbm, kCompute, kLaunch, kL2, kOccupancy };
std::string resource_name(Resource resource);

struct Knob {
  std::string name;
  std::vector<int> values;  // the allowed values; the first is the default (not the smallest)
  // The knob chooses between forms of its strategy (different kernels, not a tuning of one):
  // a search's first population tries each value where it tries the strategy's default.
  bool form = false;
};

struct Strategy {
  std::string name;
  std::string group;        // strategies of one group exclude each other
  std::string description;  // one paragraph: what an LLM prompt would carry
  std::vector<Family> families;
  Resource addresses = Resource::kHbm;
  std::vector<Knob> knobs;
  std::vector<std::string> incompatible;  // names of strategies it cannot join (symmetric)
  bool applies_to(Family family) const;
  const Knob* knob(const std::string& knob_name) const;
};

// Every strategy kiln knows, in a stable order.
const std::vector<Strategy>& strategy_catalog();
// By name; throws kiln::UsageError naming close matches' group when there is none.
const Strategy& find_strategy(const std::string& name);
// The groups a genome of `family` must have one strategy of (e.g. "load-path" for map kernels).
std::vector<std::string> required_groups(Family family);
// The strategies of `group` that apply to `family`.
std::vector<const Strategy*> group_members(const std::string& group, Family family);

}  // namespace kiln::evolve
