#include "attacks/square/square.h"

#include <algorithm>
#include <cmath>
#include <limits>
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
  if (restarts < 1 || restarts > 100)
    throw std::invalid_argument("attack '" + name + "': restarts must be an integer in [1, 100]");
  if (targets < 0 || targets > 100)
    throw std::invalid_argument("attack '" + name + "': targets must be an integer in [0, 100]");
  if (ce != 0 && ce != 1) throw std::invalid_argument("attack '" + name + "': ce must be 0 or 1");
  if (!(magnitude >= 0 && magnitude <= 1))
    throw std::invalid_argument("attack '" + name + "': magnitude must be in [0, 1]");
}

void SquareRandomSearch(oracle::QueryOracle& oracle, int resample, std::vector<float> best,
                        double best_obj, const SquareProposal& propose,
                        const AttackProgress& progress, long run_budget, const SquareScore& score) {
  std::vector<float> cand;
  int best_evals = 1;  // evaluations best_obj is the mean of
  const long start = oracle.queries();
  const auto left = [&] {
    return oracle.remaining() > 0 && (run_budget < 0 || oracle.queries() - start < run_budget);
  };
  const auto eval = [&](float* x) {
    const oracle::QueryResult r = oracle.Query(x, 1);
    return score ? score(r) : r.objective(0);
  };
  for (long i = 1; left() && !oracle.succeeded(); ++i) {
    propose(i, best, &cand);
    const double obj = eval(cand.data());
    if (best_evals < resample && left() && !oracle.succeeded()) {
      // One more evaluation of the incumbent (a fresh draw of the defense's randomness).
      const double again = eval(best.data());
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
  const long total = oracle.budget();
  const int runs = options_.restarts + options_.targets;
  const int y = oracle.true_class();
  std::vector<int> ranked;  // classes other than the label, by the first query's scores
  for (int run = 0; run < runs && oracle.remaining() > 0 && !oracle.succeeded(); ++run) {
    // This run's share: what is left, divided among the runs still to come.
    const long n_iters = (oracle.remaining()) / (runs - run);
    if (n_iters < 1) break;
    SquareScore score;
    if (run >= options_.restarts) {
      if (run - options_.restarts >= static_cast<int>(ranked.size())) break;
      const int t = ranked[run - options_.restarts];
      score = [t](const oracle::QueryResult& r) {
        double other = -std::numeric_limits<double>::infinity();
        for (Eigen::Index j = 0; j < r.log_probs.cols(); ++j)
          if (j != t) other = std::max(other, r.log_probs(0, j));
        return r.log_probs(0, t) - other;
      };
    } else if (options_.ce) {
      score = [y](const oracle::QueryResult& r) { return -r.log_probs(0, y); };
    }
    // Vertical stripes: one sign per (channel, column).
    const float m = static_cast<float>(options_.magnitude);
    std::vector<float> best = SquareStripes(x0, c, h, w, eps, rng, m);
    const oracle::QueryResult first = oracle.Query(best.data(), 1);  // best is now clipped
    if (ranked.empty() && first.log_probs.cols() > 0) {
      for (int j = 0; j < first.log_probs.cols(); ++j)
        if (j != y) ranked.push_back(j);
      std::stable_sort(ranked.begin(), ranked.end(),
                       [&](int a, int b) { return first.log_probs(0, a) > first.log_probs(0, b); });
      if (static_cast<int>(ranked.size()) > options_.targets) ranked.resize(options_.targets);
    }
    const double best_obj = score ? score(first) : first.objective(0);
    const long run_start = oracle.queries();
    SquareRandomSearch(
        oracle, options_.resample, std::move(best), best_obj,
        [&](long i, const std::vector<float>& incumbent, std::vector<float>* cand) {
          // With resampling an iteration may cost two queries: the schedule follows the
          // queries.
          const double p =
              SquareSchedule(options_.p_init,
                             options_.resample > 1 ? oracle.queries() - run_start + 1 : i, n_iters);
          const int s = std::clamp(static_cast<int>(std::lround(std::sqrt(p * h * w))), 1,
                                   std::min(h, w) - 1);
          ProposeSquareWindow(x0, incumbent, c, h, w, s, eps, rng, cand, m);
        },
        progress, n_iters - 1, score);
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
