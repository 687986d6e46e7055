#include "bo/bo_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "bo/session.h"

namespace advbo::bo {

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
  BoSession session(lb, ub, opt, rng);
  while (!session.done()) {
    const BoStep& step = session.Step(objective);
    if (callback && !callback(step)) session.Stop("callback");
  }
  return session.result();
}

}  // namespace advbo::bo
