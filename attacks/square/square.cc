#include "attacks/square/square.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attacks/common/window_refine.h"

namespace advbo::attacks {

double SquareSchedule(double p_init, long i, long n_iters) {
  const long it = static_cast<long>(static_cast<double>(i) / std::max<long>(n_iters, 1) * 10000);
  static const long kEdges[] = {10, 50, 200, 500, 1000, 2000, 4000, 6000, 8000};
  double p = p_init;
  for (long e : kEdges)
    if (it > e) p /= 2.0;
  return it > 10000 ? p_init / 512.0 : p;
}

void SquareOptions::Validate(const std::string& name) const {
  if (!(p_init > 0 && p_init <= 1))
    throw std::invalid_argument("attack '" + name + "': p_init must be in (0, 1]");
  if (resample < 1 || resample > 10000)
    throw std::invalid_argument("attack '" + name + "': resample must be an integer in [1, 10000]");
}

void SquareRandomSearch(oracle::QueryOracle& oracle, int resample, std::vector<float> best,
                        double best_obj, const SquareProposal& propose,
                        const AttackProgress& progress) {
  std::vector<float> cand;
  int best_evals = 1;  // evaluations best_obj is the mean of
  for (long i = 1; oracle.remaining() > 0 && !oracle.succeeded(); ++i) {
    propose(i, best, &cand);
    const double obj = oracle.Query(cand.data(), 1).objective(0);
    if (best_evals < resample && oracle.remaining() > 0 && !oracle.succeeded()) {
      // One more evaluation of the incumbent (a fresh draw of the defense's randomness).
      const double again = oracle.Query(best.data(), 1).objective(0);
      best_obj = (best_obj * best_evals + again) / (best_evals + 1);
      ++best_evals;
    }
    if (obj > best_obj) {  // loss decreased
      best_obj = obj;
      best_evals = 1;
      best.swap(cand);
    }
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
}

SquareAttack::SquareAttack(SquareOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  options_.Validate(name_);
}

AttackResult SquareAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                               const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const float eps = static_cast<float>(oracle.query_radius());
  const long n_iters = oracle.budget();
  // Vertical stripes: one sign per (channel, column).
  std::vector<float> best = SquareStripes(x0, c, h, w, eps, rng);
  const double best_obj = oracle.Query(best.data(), 1).objective(0);  // best is now clipped
  SquareRandomSearch(
      oracle, options_.resample, std::move(best), best_obj,
      [&](long i, const std::vector<float>& incumbent, std::vector<float>* cand) {
        // With resampling an iteration may cost two queries: the schedule follows the
        // queries.
        const double p =
            SquareSchedule(options_.p_init, options_.resample > 1 ? oracle.queries() : i, n_iters);
        const int s =
            std::clamp(static_cast<int>(std::lround(std::sqrt(p * h * w))), 1, std::min(h, w) - 1);
        ProposeSquareWindow(x0, incumbent, c, h, w, s, eps, rng, cand);
      },
      progress);
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
