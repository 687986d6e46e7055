// The objective of epoch-aware tuners (BO-BOS, Hyperband): train one configuration and report
// its learning curve epoch by epoch, so the tuner can stop the training early.
#pragma once

#include <Eigen/Dense>
#include <functional>

namespace advbo::algorithms {

/// Called after epoch n = 1, 2, ... with the validation error e_n in [0, 1] (lower is better);
/// returns false to stop the training now.
using EpochReport = std::function<bool(int epoch, double validation_error)>;

/// Trains configuration x [d] (caller units) for at most max_epochs >= 1 epochs, calling
/// report after every epoch and stopping as soon as it returns false. A failure (a crashed
/// command, a non-finite error) is reported by throwing any std::exception.
using CurveObjective =
    std::function<void(const Eigen::VectorXd& x, int max_epochs, const EpochReport& report)>;

}  // namespace advbo::algorithms
