#include "attacks/random/random_search.h"

#include <algorithm>
#include <stdexcept>

namespace advbo::attacks {

void RandomSearchOptions::Validate() const {
  if (batch < 1) throw std::invalid_argument("RandomSearch: batch must be >= 1");
}

AttackResult RandomSearch::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                               const AttackProgress& progress) const {
  options_.Validate();
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const float eps = static_cast<float>(oracle.query_radius());
  std::bernoulli_distribution coin(0.5);
  std::vector<float> batch;
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    const int n = static_cast<int>(std::min<long>(options_.batch, oracle.remaining()));
    batch.resize(n * d);
    for (int b = 0; b < n; ++b)
      for (size_t i = 0; i < d; ++i) batch[b * d + i] = x0[i] + (coin(rng) ? eps : -eps);
    oracle.Query(batch.data(), n);
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
