// A steppable BO run: the state the sequential loop keeps between evaluations (unit scaling
// of the box, goal sign, initial design, GP with its refit schedule, incumbent, stopping
// criteria, the list of steps). RunBo (bo_loop.h) is a loop over BoSession::Step; the
// algorithms in src/algorithms/ drive a session themselves: they propose points of their own
// (batches, fantasies, bandit-chosen hyperparameters) through the session's GP and record
// each evaluation with Record, so every algorithm writes the same trace records.
#pragma once

#include <Eigen/Dense>
#include <string>
#include <vector>

#include "bo/bo_loop.h"
#include "bo/gp.h"
#include "bo/random.h"

namespace advbo::bo {

/// One BO run over the box [lb, ub] (caller units) with the options of RunBo.
///
/// The GP sees inputs rescaled to [0, 1]^d and outputs multiplied by the goal sign (+1 to
/// maximise, -1 to minimise), so "higher GP output is better" inside; steps, best x/y and
/// results are in caller units. Deterministic for a given engine state and objective.
class BoSession {
 public:
  /// Validates the box (each [d], d >= 1, finite, lb < ub) and options (budget >= 1,
  /// refit_every >= 1, initial_points >= 0) — std::invalid_argument otherwise — and draws
  /// the initial design from `rng` (kept by reference; it must outlive the session).
  BoSession(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, const BoLoopOptions& options,
            Rng& rng);

  /// The standard algorithm's next point: the next initial-design point (phase "init"; a
  /// uniform draw if every design point failed), else the maximiser of the acquisition after
  /// a scheduled hyperparameter refit (phase "bo", with acquisition_value and, for UCB,
  /// beta). Returns a step with x (caller units), phase and seconds_bo set; no evaluation.
  BoStep Propose();

  /// Records an evaluation of step.x (a Propose() result or a point the caller chose, inside
  /// the box): sets evaluation, y (NaN if !ok), best_y; adds (x, sign*y) to the GP (a failed
  /// evaluation under OnError::kContinue adds the worst value seen so far); updates the
  /// incumbent and the stopping state. Throws std::logic_error if the session is done() and
  /// std::invalid_argument if x has the wrong size.
  const BoStep& Record(BoStep step);

  /// Runs `objective` at step->x, filling y, ok, error and seconds_objective; any exception
  /// or a non-finite value is a failed evaluation (never throws).
  static void Evaluate(const Objective& objective, BoStep* step);

  /// Propose(), Evaluate() and Record() in one.
  const BoStep& Step(const Objective& objective);

  /// Whether the run has ended: budget used, or a stop criterion (failure under kStop,
  /// target, patience) or Stop() fired.
  bool done() const { return !stop_reason_.empty(); }
  /// "" while running, else "budget", "target", "patience", "evaluation failed" or the
  /// reason given to Stop().
  const std::string& stop_reason() const { return stop_reason_; }
  /// Ends the run with `reason` (kept if the run already stopped on a failed evaluation).
  void Stop(const std::string& reason);

  /// Fits the GP hyperparameters by ML-II (options.fit) when at least 2 points are in it
  /// and options.fit_hyperparameters is set.
  void Refit();

  /// The GP on unit-cube inputs and sign-adjusted outputs (fantasies, batch proposals).
  const ExactGP& gp() const { return gp_; }
  /// The GP, to change its settings between steps.
  ExactGP& mutable_gp() { return gp_; }
  Eigen::VectorXd ToUnit(const Eigen::VectorXd& x) const;  ///< caller units -> [0,1]^d
  Eigen::VectorXd FromUnit(
      const Eigen::VectorXd& u) const;  ///< [0,1]^d -> caller units, in the box
  /// Internal score of an objective value: +y when maximising, -y when minimising.
  double Score(double y) const { return sign_ * y; }

  /// Dimension d of the search box.
  int dim() const { return static_cast<int>(lb_.size()); }
  /// The loop options.
  const BoLoopOptions& options() const { return opt_; }
  /// The session's random generator.
  Rng& rng() { return rng_; }
  /// Evaluations recorded so far (failed ones included).
  int evaluations() const { return static_cast<int>(res_.steps.size()); }
  /// Evaluations left in the budget.
  int remaining() const { return opt_.budget - evaluations(); }
  /// Candidate points [M, d] in [0,1]^d of a finite domain (empty for the box).
  const Eigen::MatrixXd& candidates_unit() const { return candidates_unit_; }
  /// Size of the initial design (min(budget, initial_points or max(3, d + 1)), at most M
  /// on a finite domain).
  int initial_points() const { return static_cast<int>(init_.rows()); }
  /// BO iterations proposed so far (Propose() calls past the design).
  int bo_iterations() const { return bo_iter_; }

  /// Steps, incumbent, failures, stop reason and final kernel so far.
  const BoResult& result();

 private:
  Eigen::VectorXd lb_, ub_, width_;
  BoLoopOptions opt_;
  Rng& rng_;
  double sign_;
  Eigen::MatrixXd init_;             // [n_init, d] in [0,1]^d
  std::vector<int> init_rows_;       // candidate rows of init_ (finite domain only)
  Eigen::MatrixXd candidates_unit_;  // [M, d] in [0,1]^d; empty = continuous box
  ExactGP gp_;
  BoResult res_;
  std::string stop_reason_;
  int since_improvement_ = 0, bo_iter_ = 0;
  double best_score_, worst_score_;
};

}  // namespace advbo::bo
