#include "bo/bo_loop.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include "bo/enum_names.h"
#include "bo/session.h"

namespace advbo::bo {

namespace {
constexpr NamedValue<AcquisitionKind> kAcquisitionNames[] = {{AcquisitionKind::kUcb, "ucb"},
                                                             {AcquisitionKind::kEi, "ei"},
                                                             {AcquisitionKind::kPi, "pi"},
                                                             {AcquisitionKind::kThompson, "ts"}};
}  // namespace

AcquisitionKind ParseAcquisition(const std::string& name) {
  return ParseNamed(kAcquisitionNames, name, "acquisition");
}

std::string AcquisitionName(AcquisitionKind kind) { return NameOf(kAcquisitionNames, kind); }

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
