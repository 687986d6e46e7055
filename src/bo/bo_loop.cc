#include "bo/bo_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "bo/gp.h"

namespace advbo::bo {
namespace {

using Clock = std::chrono::steady_clock;
double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

AcquisitionKind ParseAcquisition(const std::string& name) {
  if (name == "ucb") return AcquisitionKind::kUcb;
  if (name == "ei") return AcquisitionKind::kEi;
  if (name == "pi") return AcquisitionKind::kPi;
  if (name == "ts") return AcquisitionKind::kThompson;
  throw std::invalid_argument("unknown acquisition '" + name + "' (use ucb, ei, pi, ts)");
}

std::string AcquisitionName(AcquisitionKind kind) {
  switch (kind) {
    case AcquisitionKind::kUcb:
      return "ucb";
    case AcquisitionKind::kEi:
      return "ei";
    case AcquisitionKind::kPi:
      return "pi";
    case AcquisitionKind::kThompson:
      return "ts";
  }
  return "?";
}

FitOptions BoLoopOptions::DefaultFit() {
  FitOptions f;
  f.restarts = 2;
  f.max_iterations = 50;
  f.lengthscale_min = 1e-2;
  f.lengthscale_max = 10.0;
  f.noise_min = 1e-6;
  f.noise_max = 1.0;
  return f;
}

BoResult RunBo(const Objective& objective, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
               const BoLoopOptions& opt, Rng& rng, const StepCallback& callback) {
  const int d = static_cast<int>(lb.size());
  if (d < 1 || ub.size() != d) throw std::invalid_argument("RunBo: bounds must both be [d], d >= 1");
  if (!lb.allFinite() || !ub.allFinite() || (ub.array() <= lb.array()).any())
    throw std::invalid_argument("RunBo: need finite bounds with lb < ub in every coordinate");
  if (opt.budget < 1) throw std::invalid_argument("RunBo: budget must be >= 1");
  if (opt.refit_every < 1) throw std::invalid_argument("RunBo: refit_every must be >= 1");
  if (opt.initial_points < 0) throw std::invalid_argument("RunBo: initial_points must be >= 0");
  const double sign = opt.goal == Goal::kMaximize ? 1.0 : -1.0;  // GP models sign * y
  const Eigen::VectorXd width = ub - lb;
  auto to_unit = [&](const Eigen::VectorXd& x) -> Eigen::VectorXd {
    return (x - lb).cwiseQuotient(width);
  };
  auto from_unit = [&](const Eigen::VectorXd& u) -> Eigen::VectorXd {
    return lb + u.cwiseProduct(width);
  };
  const int n_init = std::min(
      opt.budget, opt.initial_points > 0 ? opt.initial_points : std::max(3, d + 1));
  const Eigen::VectorXd ulb = Eigen::VectorXd::Zero(d), uub = Eigen::VectorXd::Ones(d);
  const Eigen::MatrixXd init = MakeDesign(opt.initial_design, n_init, ulb, uub, rng);

  ExactGP gp(std::make_unique<StationaryKernel>(opt.kernel, d, opt.ard, std::vector<int>{}, 0.2,
                                                1.0),
             opt.noise_variance);
  BoResult res;
  int since_improvement = 0, bo_iter = 0;
  double best_score = -std::numeric_limits<double>::infinity();  // best sign * y
  double worst_score = std::numeric_limits<double>::infinity();

  for (int e = 1; e <= opt.budget; ++e) {
    BoStep step;
    step.evaluation = e;
    Eigen::VectorXd u;
    const auto t_bo = Clock::now();
    if (e <= n_init || gp.num_data() == 0) {
      step.phase = "init";
      u = e <= n_init ? Eigen::VectorXd(init.row(e - 1).transpose())
                      : MakeDesign(DesignKind::kUniform, 1, ulb, uub, rng).row(0).transpose();
    } else {
      step.phase = "bo";
      ++bo_iter;
      if ((bo_iter - 1) % opt.refit_every == 0 && gp.num_data() >= 2)
        FitHyperparameters(&gp, opt.fit, rng);
      // The incumbent (in GP input units) seeds one local start.
      Eigen::Index ib = 0;
      gp.y().maxCoeff(&ib);
      const Eigen::MatrixXd incumbent = gp.X().row(ib);
      std::unique_ptr<Acquisition> acq;
      switch (opt.acquisition) {
        case AcquisitionKind::kUcb:
          step.beta = opt.beta.Beta(bo_iter, d);
          acq = std::make_unique<UcbAcquisition>(gp, step.beta);
          break;
        case AcquisitionKind::kEi:
          acq = std::make_unique<ExpectedImprovement>(gp, gp.y().maxCoeff(),
                                                      opt.xi * gp.y_scale());
          break;
        case AcquisitionKind::kPi:
          acq = std::make_unique<ProbabilityOfImprovement>(gp, gp.y().maxCoeff(),
                                                           opt.xi * gp.y_scale());
          break;
        case AcquisitionKind::kThompson:
          acq = std::make_unique<ThompsonSample>(gp, opt.ts_features, rng);
          break;
      }
      const AcquisitionMax m =
          MaximizeAcquisition(*acq, ulb, uub, opt.acquisition_optimizer, rng, incumbent);
      u = m.x;
      step.acquisition_value = m.value;
    }
    step.seconds_bo = Since(t_bo);
    step.x = from_unit(u);
    const auto t_f = Clock::now();
    try {
      step.y = objective(step.x);
      step.ok = std::isfinite(step.y);
      if (!step.ok) step.error = "objective returned a non-finite value";
    } catch (const std::exception& ex) {
      step.ok = false;
      step.error = ex.what();
    }
    step.seconds_objective = Since(t_f);
    if (step.ok) {
      const double s = sign * step.y;
      gp.AddObservation(u, s);
      worst_score = std::min(worst_score, s);
      if (s > best_score) {
        best_score = s;
        res.best_x = step.x;
        res.best_y = step.y;
        since_improvement = 0;
      } else {
        ++since_improvement;
      }
    } else {
      ++res.failures;
      step.y = std::numeric_limits<double>::quiet_NaN();
      if (opt.on_error == OnError::kContinue && gp.num_data() > 0) gp.AddObservation(u, worst_score);
      ++since_improvement;
    }
    step.best_y = res.best_y;
    res.steps.push_back(step);
    const bool keep_going = !callback || callback(res.steps.back());
    if (!step.ok && opt.on_error == OnError::kStop) {
      res.stop_reason = "evaluation failed";
      break;
    }
    if (!keep_going) {
      res.stop_reason = "callback";
      break;
    }
    if (!std::isnan(opt.target) && std::isfinite(best_score) && best_score >= sign * opt.target) {
      res.stop_reason = "target";
      break;
    }
    if (opt.patience > 0 && since_improvement >= opt.patience) {
      res.stop_reason = "patience";
      break;
    }
  }
  if (res.stop_reason.empty()) res.stop_reason = "budget";
  res.kernel = gp.kernel().Describe();
  return res;
}

}  // namespace advbo::bo
