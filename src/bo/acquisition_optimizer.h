// Maximisers of an Acquisition: enumeration of a finite set; space-filling candidates
// followed by multi-start bounded L-BFGS-B with analytic gradients (LBFGS++); DIRECT
// (Jones et al. 1993, NLopt's DIRECT-L); and a wrapper that optimises a block of
// coordinates with the others fixed (Add-GP-UCB groups, R2-B2 agents' own actions).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "bo/acquisition.h"
#include "bo/design.h"
#include "bo/random.h"

namespace advbo::bo {

/// Result of an acquisition maximisation.
struct AcquisitionMax {
  Eigen::VectorXd x;  ///< maximiser [d], inside the box / one row of the set
  double value;       ///< acquisition value at x
  int evaluations;    ///< acquisition evaluations (points) used
};

/// Exhaustive maximisation over the rows of `set` [M, d] (M >= 1, else
/// std::invalid_argument). Ties go to the first row. Non-finite values never win.
AcquisitionMax MaximizeOverSet(const Acquisition& acq, const Eigen::MatrixXd& set, int* index);

/// Options of MaximizeAcquisition; defaults suit d <= 20.
struct AcquisitionOptimizerOptions {
  DesignKind design = DesignKind::kSobol;  ///< candidate point set
  int num_candidates = 1000;               ///< candidates scored in one batch (>= 1)
  int num_starts = 5;                      ///< best distinct candidates refined by L-BFGS-B
  int max_iterations = 50;                 ///< L-BFGS-B iterations per start
  /// num_candidates >= 1, num_starts and max_iterations >= 0; throws std::invalid_argument.
  void Validate() const;
};

/// Scores `num_candidates` design points (plus any `extra_starts` rows [K, d], e.g. the
/// incumbent) in one batch, then refines the `num_starts` best with bounded L-BFGS-B on the
/// analytic gradient and returns the best point found. Box [lb, ub] each [d].
AcquisitionMax MaximizeAcquisition(const Acquisition& acq, const Eigen::VectorXd& lb,
                                   const Eigen::VectorXd& ub,
                                   const AcquisitionOptimizerOptions& options, Rng& rng,
                                   const Eigen::MatrixXd& extra_starts = {});

/// Global maximisation with NLopt's DIRECT-L (derivative-free) over the box, at most
/// max_evaluations evaluations (>= 1). Throws std::runtime_error if NLopt fails outright.
AcquisitionMax MaximizeDirect(const Acquisition& acq, const Eigen::VectorXd& lb,
                              const Eigen::VectorXd& ub, int max_evaluations);

/// The restriction of an acquisition to a block of coordinates: b(z) = a(x) with x = base
/// except x[block] = z; gradient = the block of a's gradient. Holds a reference to acq.
class BlockAcquisition final : public Acquisition {
 public:
  /// block: distinct indices into [0, acq.dim()); base [acq.dim()]. Else invalid_argument.
  BlockAcquisition(const Acquisition& acq, std::vector<int> block, Eigen::VectorXd base);
  int dim() const override { return static_cast<int>(block_.size()); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& z) const override;
  double ValueAndGradient(const Eigen::VectorXd& z, Eigen::VectorXd* grad) const override;
  /// The full point [acq.dim()] for block values z [|block|].
  Eigen::VectorXd Embed(const Eigen::VectorXd& z) const;

 private:
  const Acquisition& acq_;
  std::vector<int> block_;
  Eigen::VectorXd base_;
};

}  // namespace advbo::bo
