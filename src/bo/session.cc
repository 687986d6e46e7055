#include "bo/session.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>

#include "bo/clock.h"

namespace advbo::bo {
namespace {

const Eigen::VectorXd& CheckedBox(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                                  const BoLoopOptions& opt) {
  const Eigen::Index d = lb.size();
  if (d < 1 || ub.size() != d)
    throw std::invalid_argument("RunBo: bounds must both be [d], d >= 1");
  if (!lb.allFinite() || !ub.allFinite() || (ub.array() <= lb.array()).any())
    throw std::invalid_argument("RunBo: need finite bounds with lb < ub in every coordinate");
  opt.Validate();
  return lb;
}

std::unique_ptr<Kernel> InitialKernel(int d, const BoLoopOptions& opt) {
  auto k = std::make_unique<StationaryKernel>(opt.kernel, d, opt.ard, std::vector<int>{}, 0.2,
                                              opt.initial_signal_variance);
  const Eigen::VectorXd& ls = opt.initial_lengthscales;
  if (ls.size() == 0) return k;
  const int n = opt.ard ? d : 1;
  if (ls.size() != n || !(ls.array() > 0).all() || !ls.allFinite())
    throw std::invalid_argument("RunBo: initial_lengthscales must be " + std::to_string(n) +
                                " positive values");
  Eigen::VectorXd theta = k->LogParams();
  theta.head(n) = ls.array().log().matrix();
  k->SetLogParams(theta);
  return k;
}

}  // namespace

void BoLoopOptions::Validate() const {
  if (budget < 1) throw std::invalid_argument("RunBo: budget must be >= 1");
  if (refit_every < 1) throw std::invalid_argument("RunBo: refit_every must be >= 1");
  if (initial_points < 0) throw std::invalid_argument("RunBo: initial_points must be >= 0");
  if (!(initial_signal_variance > 0))
    throw std::invalid_argument("RunBo: initial_signal_variance must be > 0");
  fit.Validate();
  acquisition_optimizer.Validate();
}

BoSession::BoSession(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                     const BoLoopOptions& options, Rng& rng)
    : lb_(CheckedBox(lb, ub, options)),
      ub_(ub),
      width_(ub - lb),
      opt_(options),
      rng_(rng),
      sign_(options.goal == Goal::kMaximize ? 1.0 : -1.0),
      gp_(InitialKernel(static_cast<int>(lb.size()), options), options.noise_variance,
          options.standardize),
      best_score_(-std::numeric_limits<double>::infinity()),
      worst_score_(std::numeric_limits<double>::infinity()) {
  const int d = dim();
  const int n_init =
      std::min(opt_.budget, opt_.initial_points > 0 ? opt_.initial_points : std::max(3, d + 1));
  const Eigen::MatrixXd& c = opt_.candidates;
  if (c.size() == 0) {
    init_ = MakeDesign(opt_.initial_design, n_init, Eigen::VectorXd::Zero(d),
                       Eigen::VectorXd::Ones(d), rng_);
    return;
  }
  if (c.cols() != d) throw std::invalid_argument("RunBo: candidates must have d columns");
  candidates_unit_.resize(c.rows(), d);
  for (Eigen::Index i = 0; i < c.rows(); ++i) {
    if (!c.row(i).allFinite() || (c.row(i).transpose().array() < lb_.array()).any() ||
        (c.row(i).transpose().array() > ub_.array()).any())
      throw std::invalid_argument("RunBo: candidate " + std::to_string(i + 1) +
                                  " lies outside the box");
    candidates_unit_.row(i) = ToUnit(c.row(i).transpose()).transpose();
  }
  // Distinct random rows (a partial Fisher-Yates shuffle).
  std::vector<Eigen::Index> order(c.rows());
  for (Eigen::Index i = 0; i < c.rows(); ++i) order[i] = i;
  const int n = static_cast<int>(std::min<Eigen::Index>(n_init, c.rows()));
  init_.resize(n, d);
  init_rows_.resize(n);
  for (int i = 0; i < n; ++i) {
    std::uniform_int_distribution<Eigen::Index> pick(i, c.rows() - 1);
    std::swap(order[i], order[pick(rng_)]);
    init_.row(i) = candidates_unit_.row(order[i]);
    init_rows_[i] = static_cast<int>(order[i]);
  }
}

Eigen::VectorXd BoSession::ToUnit(const Eigen::VectorXd& x) const {
  return (x - lb_).cwiseQuotient(width_);
}

Eigen::VectorXd BoSession::FromUnit(const Eigen::VectorXd& u) const {
  // Clamped: lb + u * (ub - lb) can land a rounding error outside the box (e.g. -5.9e-18 for
  // u = 0 on [0, 15] after an optimiser step), and a trace with such an x is refused when
  // read back as a meta-task.
  return (lb_ + u.cwiseProduct(width_)).cwiseMax(lb_).cwiseMin(ub_);
}

void BoSession::Refit() {
  if (opt_.fit_hyperparameters && gp_.num_data() >= 2) FitHyperparameters(&gp_, opt_.fit, rng_);
}

BoStep BoSession::Propose() {
  const int d = dim();
  const int e = evaluations() + 1;
  const Eigen::VectorXd ulb = Eigen::VectorXd::Zero(d), uub = Eigen::VectorXd::Ones(d);
  BoStep step;
  Eigen::VectorXd u;
  const auto t_bo = Clock::now();
  if (e <= initial_points() || gp_.num_data() == 0) {
    step.phase = "init";
    if (e <= initial_points()) {
      u = init_.row(e - 1).transpose();
      if (!init_rows_.empty()) step.candidate_index = init_rows_[e - 1];
    } else if (candidates_unit_.rows() > 0) {
      std::uniform_int_distribution<Eigen::Index> pick(0, candidates_unit_.rows() - 1);
      const Eigen::Index row = pick(rng_);
      u = candidates_unit_.row(row).transpose();
      step.candidate_index = static_cast<int>(row);
    } else {
      u = MakeDesign(DesignKind::kUniform, 1, ulb, uub, rng_).row(0).transpose();
    }
  } else {
    step.phase = "bo";
    ++bo_iter_;
    if ((bo_iter_ - 1) % opt_.refit_every == 0) Refit();
    // The incumbent (in GP input units) seeds one local start.
    Eigen::Index ib = 0;
    gp_.y().maxCoeff(&ib);
    const Eigen::MatrixXd incumbent = gp_.X().row(ib);
    std::unique_ptr<Acquisition> acq;
    switch (opt_.acquisition) {
      case AcquisitionKind::kUcb:
        step.beta = opt_.beta.Beta(bo_iter_, d, static_cast<double>(candidates_unit_.rows()));
        acq = std::make_unique<UcbAcquisition>(gp_, step.beta);
        break;
      case AcquisitionKind::kEi:
        acq =
            std::make_unique<ExpectedImprovement>(gp_, gp_.y().maxCoeff(), opt_.xi * gp_.y_scale());
        break;
      case AcquisitionKind::kPi:
        acq = std::make_unique<ProbabilityOfImprovement>(gp_, gp_.y().maxCoeff(),
                                                         opt_.xi * gp_.y_scale());
        break;
      case AcquisitionKind::kThompson:
        acq = std::make_unique<ThompsonSample>(gp_, opt_.ts_features, rng_);
        break;
    }
    int index = 0;
    const AcquisitionMax m =
        candidates_unit_.rows() > 0
            ? MaximizeOverSet(*acq, candidates_unit_, &index)
            : MaximizeAcquisition(*acq, ulb, uub, opt_.acquisition_optimizer, rng_, incumbent);
    u = m.x;
    if (candidates_unit_.rows() > 0) step.candidate_index = index;
    step.acquisition_value = m.value;
  }
  step.seconds_bo = SecondsSince(t_bo);
  step.x = FromUnit(u);
  step.x_unit = u;
  return step;
}

void BoSession::Evaluate(const Objective& objective, BoStep* step) {
  const auto t_f = Clock::now();
  try {
    step->y = objective(step->x);
    step->ok = std::isfinite(step->y);
    step->error = step->ok ? "" : "objective returned a non-finite value";
  } catch (const std::exception& ex) {
    step->ok = false;
    step->error = ex.what();
  }
  step->seconds_objective = SecondsSince(t_f);
}

const BoStep& BoSession::Record(BoStep step) {
  if (done()) throw std::logic_error("BoSession::Record: the run has ended (" + stop_reason_ + ")");
  if (step.x.size() != dim())
    throw std::invalid_argument("BoSession::Record: x has " + std::to_string(step.x.size()) +
                                " coordinates, the box " + std::to_string(dim()));
  step.evaluation = evaluations() + 1;
  if (step.x_unit.size() != 0 && step.x_unit.size() != dim())
    throw std::invalid_argument("BoSession::Record: x_unit has the wrong size");
  const Eigen::VectorXd u = step.x_unit.size() ? step.x_unit : ToUnit(step.x);
  if (step.ok) {
    const double s = sign_ * step.y;
    gp_.AddObservation(u, s);
    worst_score_ = std::min(worst_score_, s);
    if (s > best_score_) {
      best_score_ = s;
      res_.best_x = step.x;
      res_.best_y = step.y;
      since_improvement_ = 0;
    } else {
      ++since_improvement_;
    }
  } else {
    ++res_.failures;
    step.y = std::numeric_limits<double>::quiet_NaN();
    if (opt_.on_error == OnError::kContinue && gp_.num_data() > 0)
      gp_.AddObservation(u, worst_score_);
    ++since_improvement_;
  }
  step.best_y = res_.best_y;
  res_.steps.push_back(std::move(step));
  const BoStep& last = res_.steps.back();
  if (!last.ok && opt_.on_error == OnError::kStop)
    stop_reason_ = "evaluation failed";
  else if (!std::isnan(opt_.target) && std::isfinite(best_score_) &&
           best_score_ >= sign_ * opt_.target)
    stop_reason_ = "target";
  else if (opt_.patience > 0 && since_improvement_ >= opt_.patience)
    stop_reason_ = "patience";
  else if (evaluations() >= opt_.budget)
    stop_reason_ = "budget";
  return last;
}

const BoStep& BoSession::Step(const Objective& objective) {
  if (done()) throw std::logic_error("BoSession::Step: the run has ended (" + stop_reason_ + ")");
  BoStep step = Propose();
  Evaluate(objective, &step);
  return Record(std::move(step));
}

void BoSession::Stop(const std::string& reason) {
  if (stop_reason_ != "evaluation failed") stop_reason_ = reason;
}

const BoResult& BoSession::result() {
  res_.stop_reason = stop_reason_;
  res_.kernel = gp_.kernel().Describe();
  return res_;
}

}  // namespace advbo::bo
