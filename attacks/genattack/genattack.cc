#include "attacks/genattack/genattack.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bo/online_learning.h"

namespace advbo::attacks {

void GenAttackOptions::Validate() const {
  if (population < 2 || !(temperature > 0) || !(mutation_rate >= 0 && mutation_rate <= 1) ||
      !(alpha > 0))
    throw std::invalid_argument(
        "GenAttack: need population >= 2, temperature > 0, rho in [0,1], alpha > 0");
}

AttackResult GenAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                            const AttackProgress& progress) const {
  const GenAttackOptions& o = options_;
  o.Validate();
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const float eps = static_cast<float>(oracle.query_radius());
  const int n = o.population;
  std::uniform_real_distribution<float> init(-eps, eps),
      mut(-static_cast<float>(o.alpha) * eps, static_cast<float>(o.alpha) * eps);
  std::bernoulli_distribution mutate(o.mutation_rate);

  // Initial population x0 + U(-eps, eps), evaluated (and clipped) by the oracle.
  std::vector<float> pop(n * d);
  for (int i = 0; i < n; ++i)
    for (size_t k = 0; k < d; ++k) pop[i * d + k] = x0[k] + init(rng);
  const int first = static_cast<int>(std::min<long>(n, oracle.remaining()));
  Eigen::VectorXd fit = Eigen::VectorXd::Constant(n, -INFINITY);
  fit.head(first) = oracle.Query(pop.data(), first).objective;
  if (progress) progress(oracle.queries(), oracle.best_objective());

  std::vector<float> next(n * d);
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    Eigen::Index elite;
    fit.maxCoeff(&elite);
    const Eigen::VectorXd probs = bo::SoftmaxFromLog(fit / o.temperature);
    // Elitism: the best member survives unchanged (and is not re-evaluated).
    std::copy(pop.begin() + elite * d, pop.begin() + (elite + 1) * d, next.begin());
    const double elite_fit = fit(elite);
    for (int i = 1; i < n; ++i) {
      const int p1 = bo::SampleIndex(probs, rng), p2 = bo::SampleIndex(probs, rng);
      const double w1 = probs(p1) / (probs(p1) + probs(p2));
      std::bernoulli_distribution from_first(std::isfinite(w1) ? w1 : 0.5);
      float* child = next.data() + i * d;
      for (size_t k = 0; k < d; ++k) {
        float v = from_first(rng) ? pop[p1 * d + k] : pop[p2 * d + k];
        if (mutate(rng)) v += mut(rng);
        child[k] = v;  // projected onto the eps-ball by the oracle
      }
    }
    const int m = static_cast<int>(std::min<long>(n - 1, oracle.remaining()));
    const Eigen::VectorXd f = oracle.Query(next.data() + d, m).objective;
    pop.swap(next);
    fit(0) = elite_fit;
    fit.segment(1, m) = f;
    for (int i = 1 + m; i < n; ++i) fit(i) = -INFINITY;  // budget ran out mid-generation
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
