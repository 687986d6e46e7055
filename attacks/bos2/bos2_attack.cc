#include "attacks/bos2/bos2_attack.h"

#include <algorithm>

namespace advbo::attacks {

Bos2Options Bos2Attack::OptionsFor(const AttackContext& context, bool stopping) {
  Bos2Options o;
  o.stopping = stopping;
  const int max_side = std::min(context.height, context.width);
  auto clip = [&](std::vector<int>& v) {
    v.erase(std::remove_if(v.begin(), v.end(), [&](int s) { return s > max_side; }), v.end());
    if (v.empty()) v.push_back(max_side);
  };
  clip(o.allowed_sides);
  clip(o.init_sides);
  return o;
}

AttackResult Bos2Attack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                             const AttackProgress& progress) const {
  const Bos2Result b = RunBos2(oracle, options_, rng, progress);
  AttackResult r;
  r.success = b.success;
  r.queries = b.queries;
  r.best_objective = b.best_objective;
  r.adversarial = b.adversarial;
  r.seconds = b.seconds;
  r.model_seconds = b.model_seconds;
  r.bo_seconds = b.bo_seconds;
  nlohmann::json loops = nlohmann::json::array();
  for (const auto& l : b.loops)
    loops.push_back({{"side", l.side}, {"latent_dim", l.latent_dim}, {"start_query", l.start_query},
                     {"queries", l.queries}, {"stopped_early", l.stopped_early},
                     {"best_objective", l.best_objective}});
  r.details["loops"] = loops;
  r.details["stopping"] = options_.stopping;
  return r;
}

}  // namespace advbo::attacks
