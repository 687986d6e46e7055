// RayS (Chen & Gu, "RayS: A Ray Searching Method for Hard-label Adversarial Attack", KDD
// 2020, Algorithms 1-3): a hard-label, untargeted L_inf attack. It searches the direction
// d in {-1, +1}^n of a ray from the clean image x0 for the one whose decision boundary is
// closest in L_inf: the radius of direction d is r(d) = min { r : clip(x0 + r d, 0, 1) is
// misclassified }. Directions are explored by flipping contiguous chunks of d, halving the
// chunk size level by level (Algorithm 2, the hierarchical search; chunks in the flattened
// C*H*W order). For each candidate, one query at the current best radius r* tells whether
// it can improve (Algorithm 3: if clip(x0 + r* d') is not adversarial, r(d') >= r* and the
// candidate is dropped); otherwise a binary search on [0, r*] finds its radius to within
// `tolerance`. The run stops at the first adversarial query inside the eps-ball (the oracle's
// success with label feedback) or when the budget is spent.
//
// The first direction (all +1) is tested at r = 1, the largest L_inf radius. Under 8-bit
// queries radii are whole grid steps k/255, so every query is an 8-bit image and the binary
// search ends at one step.
#pragma once

#include <vector>

#include "attacks/attack.h"

namespace advbo::attacks {

/// RayS' ray search on one instance (Algorithms 2-3), shared with the BO hard-label attack
/// (attacks/bo_hard_label): radii of sign directions d in {-1, +1}^n from the clean image.
class RaySearch {
 public:
  /// `tolerance`: the binary search's resolution under float queries (one grid step under
  /// 8-bit queries). The oracle must outlive the search.
  RaySearch(oracle::QueryOracle& oracle, double tolerance);
  /// Whether clip(x0 + r d) is adversarial (one query; false once the budget is spent).
  bool Adversarial(const std::vector<float>& d, double r);
  /// Algorithm 3: the radius of d if below `best` (one query at best, +inf meaning 1, then a
  /// binary search on [0, best]), else `best`.
  double Search(const std::vector<float>& d, double best);
  /// Algorithm 2 from direction *d with radius `best`: chunk flips at halving sizes, each
  /// kept when Search improves; runs until success or the budget is spent, or (patience > 0)
  /// until `patience` queries in a row have not improved the radius; returns the final radius
  /// and leaves the final direction in *d.
  double Hierarchical(std::vector<float>* d, double best, const AttackProgress& progress,
                      long patience = 0);

 private:
  oracle::QueryOracle& oracle_;
  const std::vector<float>& x0_;
  bool grid_;
  double step_;
  std::vector<float> x_;
};

/// RayS settings.
struct RaysOptions {
  /// Binary-search tolerance on the radius (pixel units) under float queries, in (0, 1];
  /// 1e-3 as in the paper's experiments. Under 8-bit queries the search ends at one step.
  double tolerance = 1e-3;
};

/// RayS; spec "rays" or "rays:tolerance=T". Label feedback, L_inf, untargeted only.
class RaysAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit RaysAttack(RaysOptions options = {}, std::string name = "rays");
  /// Runs until an adversarial query lies inside the eps-ball or the budget is spent.
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  RaysOptions options_;
};

}  // namespace advbo::attacks
