// Square Attack, L_inf (Andriushchenko, Croce, Flammarion, Hein, ECCV 2020, Algorithms 1-2):
// random search over square-shaped updates at the vertices of the eps-ball. Initialisation
// with vertical stripes (+-eps per column and channel); each iteration re-draws one square
// window of side s (constant +-eps per channel inside it) and keeps the change only if the
// loss decreases. s = round(sqrt(p * h * w)) follows the paper's piecewise-constant schedule
// for p (halved at iterations 10, 50, 200, 500, 1000, 2000, 4000, 6000, 8000 of a
// 10,000-iteration run, rescaled to the query budget).
//
// Against a randomised defense (RND, Qin et al. NeurIPS 2021: Gaussian noise on every query)
// the greedy rule "keep the change if the loss decreases" compares one noisy loss with the
// smallest noisy loss seen so far, which is biased low (the winner's curse): the attack
// keeps a lucky iterate and stops moving. `resample = R > 1` is this project's noise-aware
// variant (an adaptive attack, docs/defenses.md): the incumbent's loss is the mean of up to
// R evaluations of it, re-querying it (a counted query) after each candidate until it has R,
// and the p schedule follows the queries spent rather than the iterations. R = 1 is the
// paper's Square Attack, query for query.
//
// Loss: untargeted margin z_true - max_{k != true} z_k (= log-probability margin); targeted
// cross-entropy -log p_target. Both are decreasing functions of the oracle's objective
// (thesis eq. 5.3), so the accept/reject decisions are computed from it exactly.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "attacks/attack.h"

namespace advbo::attacks {

/// Square Attack settings.
struct SquareOptions {
  /// Initial fraction of pixels changed per iteration. The paper's default for CIFAR-10 and
  /// ImageNet is 0.05; for MNIST the authors use p_init = 0.8 (Square Attack repository,
  /// MNIST challenge). MakeAttack picks by dataset.
  double p_init = 0.05;
  /// Evaluations of the incumbent its loss is averaged over, >= 1 (1 = the paper's rule; see
  /// above). Spec: square:resample=R.
  int resample = 1;
  /// Independent untargeted runs, each from fresh stripes with its own p schedule over its
  /// share of the budget, until one succeeds (>= 1; 1 = the paper). Spec: square:restarts=R.
  int restarts = 1;
  /// Targeted runs after the untargeted ones, on the top `targets` classes other than the
  /// label by the first query's scores, each maximising the targeted margin
  /// log p_t - max_{j != t} log p_j (a success is still the oracle's: untargeted); AutoAttack
  /// runs its targeted attacks this way (Croce & Hein 2020, Sec. 4). >= 0. Spec:
  /// square:targets=K. The budget is shared equally by the restarts + targets runs (what
  /// one leaves unused passes on).
  int targets = 0;
  /// Smallest magnitude of a window's value, as a fraction of the radius, in [0, 1]: each
  /// window (and stripe) is set to +-radius * u, u ~ U[magnitude, 1], so the search reaches
  /// inside the ball, not only its vertices (1 = the paper). An adversarially trained model
  /// can be robust at the vertices and not inside (on models/mnist_fgsm_overfit.pt the
  /// nearest vertex of 57 of 61 APGD breaks is not adversarial). Spec: square:magnitude=M.
  double magnitude = 1.0;
  /// The untargeted runs' loss: 0 = the margin (the oracle's objective, the paper), 1 =
  /// cross-entropy, maximising -log p_y. Spec: square:ce=1.
  int ce = 0;
  /// p_init in (0, 1], resample in [1, 10000], restarts in [1, 100], targets in [0, 100], ce
  /// 0 or 1, magnitude in [0, 1];
  /// throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name = "square") const;
};

/// The schedule p(i) for iteration i of a run of n_iters iterations (paper Sec. 4 / App.).
double SquareSchedule(double p_init, long i, long n_iters);

/// Proposes a candidate from the incumbent: (iteration i = 1, 2, ..., incumbent [D],
/// candidate out [D]).
using SquareProposal = std::function<void(long, const std::vector<float>&, std::vector<float>*)>;

/// Square Attack's random-search loop (paper Algorithm 1, lines 3-9), shared by the L_inf and
/// L2 attacks: until success or the budget is spent, propose a candidate from the incumbent
/// `best` [D] (queried already, objective `best_obj`), query it and keep it if the objective
/// rises (the loss falls). resample = R > 1: the incumbent's objective is the mean of up to R
/// evaluations, re-querying it after each candidate until it has R (see above); 1 = the paper.
///
/// `run_budget` >= 0 stops the loop after that many queries of its own (-1: the oracle's
/// budget alone); `score` replaces the oracle's objective as what the search maximises (the
/// oracle still decides success; null = objective(0)).
using SquareScore = std::function<double(const oracle::QueryResult&)>;
void SquareRandomSearch(oracle::QueryOracle& oracle, int resample, std::vector<float> best,
                        double best_obj, const SquareProposal& propose,
                        const AttackProgress& progress, long run_budget = -1,
                        const SquareScore& score = nullptr);

/// Square Attack; spec "square" or "square:p_init=P,resample=R,restarts=N,targets=K,ce=1,
/// magnitude=M"
/// (P in (0, 1], R an integer in [1, 10000], N in [1, 100], K in [0, 100]). Throws
/// std::invalid_argument on options out of range.
class SquareAttack final : public Attack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit SquareAttack(SquareOptions options = {}, std::string name = "square");
  std::string name() const override { return name_; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  SquareOptions options_;
  std::string name_;
};

}  // namespace advbo::attacks
