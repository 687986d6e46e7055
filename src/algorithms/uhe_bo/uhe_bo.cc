#include "algorithms/uhe_bo/uhe_bo.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "bo/clock.h"
#include "bo/enum_names.h"
#include "bo/hyperparameters.h"

namespace advbo::algorithms {
namespace {

using bo::Clock;

bool UsesExp3(UheVariant v) { return v == UheVariant::kUhe || v == UheVariant::kRandomExp3; }
bool UsesPseudoFit(UheVariant v) { return v == UheVariant::kUhe || v == UheVariant::kRa; }

}  // namespace

PairedExp3::PairedExp3(int horizon) {
  if (horizon < 1) throw std::invalid_argument("PairedExp3: horizon must be >= 1");
  gamma_ = std::min(1.0, std::sqrt(4.0 * std::log(2.0) / ((std::exp(1.0) - 1.0) * horizon)));
}

Eigen::Vector2d PairedExp3::Probabilities() const {
  const double m = log_w_.maxCoeff();
  const Eigen::Vector2d w = (log_w_.array() - m).exp();
  return ((1.0 - gamma_) * w / w.sum()).array() + gamma_ / 2.0;
}

int PairedExp3::Draw(bo::Rng& rng) {
  const Eigen::Vector2d p = Probabilities();
  last_arm_ = std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p(0) ? 0 : 1;
  last_p_ = p(last_arm_);
  return last_arm_;
}

void PairedExp3::Update(double reward) {
  if (last_arm_ < 0) throw std::logic_error("PairedExp3::Update before Draw");
  const double r = std::clamp(std::isfinite(reward) ? reward : 0.0, 0.0, 1.0);
  log_w_(last_arm_) += gamma_ * r / (2.0 * last_p_);
}

Eigen::VectorXd NearestLabels(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                              const Eigen::MatrixXd& xq) {
  if (x.rows() < 1 || y.size() != x.rows() || xq.cols() != x.cols())
    throw std::invalid_argument("NearestLabels: need data [N >= 1, d], y [N], queries [M, d]");
  Eigen::VectorXd labels(xq.rows());
  for (Eigen::Index j = 0; j < xq.rows(); ++j) {
    Eigen::Index nearest = 0;
    (x.rowwise() - xq.row(j)).rowwise().squaredNorm().minCoeff(&nearest);
    labels(j) = y(nearest);
  }
  return labels;
}

void PseudoIidDataset(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, int m, bo::Rng& rng,
                      Eigen::MatrixXd* x_pseudo, Eigen::VectorXd* y_pseudo) {
  if (x.rows() < 1 || y.size() != x.rows() || m < 1)
    throw std::invalid_argument("PseudoIidDataset: need data [N >= 1, d], y [N] and m >= 1");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  x_pseudo->resize(m, x.cols());
  for (int j = 0; j < m; ++j)
    for (Eigen::Index k = 0; k < x.cols(); ++k) (*x_pseudo)(j, k) = u(rng);
  *y_pseudo = NearestLabels(x, y, *x_pseudo);
}

namespace {
constexpr bo::NamedValue<UheVariant> kUheVariantNames[] = {{UheVariant::kUhe, "uhe"},
                                                           {UheVariant::kMap, "map"},
                                                           {UheVariant::kRa, "ra"},
                                                           {UheVariant::kRandomExp3, "random-exp3"},
                                                           {UheVariant::kRandom, "random"}};
}  // namespace

UheVariant ParseUheVariant(const std::string& name) {
  return bo::ParseNamed(kUheVariantNames, name, "UHE-BO variant");
}

std::string UheVariantName(UheVariant v) { return bo::NameOf(kUheVariantNames, v); }

void ApplyUhePriors(bo::FitOptions* fit) {
  const bo::GammaPrior gamma{1e-3, 10.0};
  fit->lengthscale_gamma = fit->variance_gamma = fit->noise_gamma = gamma;
}

bo::BoLoopOptions UheLoopOptions(int initial_points, int horizon) {
  if (initial_points < 1 || horizon < 1)
    throw std::invalid_argument("UheLoopOptions: need initial_points >= 1 and horizon >= 1");
  bo::BoLoopOptions o;
  o.acquisition = bo::AcquisitionKind::kUcb;
  o.beta = bo::ExplorationWeight{bo::BetaPolicy::kConstant, 1.96, 0.1};
  o.kernel = bo::KernelFamily::kMatern52;
  o.ard = true;
  o.fit_hyperparameters = false;  // RunUheBo fits before every GP-UCB proposal
  o.fit.fit_noise = true;
  o.fit.restarts = 1;
  ApplyUhePriors(&o.fit);
  o.initial_points = initial_points;
  o.budget = initial_points + horizon;
  return o;
}

namespace {

// A uniformly random point of the session's domain (a random candidate of a finite domain),
// as a step to evaluate (phase "random").
bo::BoStep RandomStep(const bo::BoSession& session, bo::Rng& rng) {
  const auto t0 = Clock::now();
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::VectorXd unit(session.dim());
  const Eigen::MatrixXd& candidates = session.candidates_unit();
  if (candidates.rows() > 0) {
    std::uniform_int_distribution<Eigen::Index> pick(0, candidates.rows() - 1);
    unit = candidates.row(pick(rng)).transpose();
  } else {
    for (int k = 0; k < session.dim(); ++k) unit(k) = u(rng);
  }
  bo::BoStep step;
  step.phase = "random";
  step.x_unit = unit;
  step.x = session.FromUnit(unit);
  step.seconds_bo = bo::SecondsSince(t0);
  return step;
}

// The GP-UCB step after fitting the hyperparameters: eq. (2) on pseudo-i.i.d. data (UHE-BO,
// RA) or MAP on the evaluated data; sets extra["fit"].
bo::BoStep AcquisitionStep(bo::BoSession& session, UheVariant variant, bo::Rng& rng,
                           nlohmann::json* extra) {
  const auto t0 = Clock::now();
  bo::ExactGP& gp = session.mutable_gp();
  if (gp.num_data() >= 2) {
    if (UsesPseudoFit(variant)) {
      Eigen::MatrixXd xp;
      Eigen::VectorXd yp;
      PseudoIidDataset(gp.X(), gp.y(), 2 * gp.num_data(), rng, &xp, &yp);
      bo::FitHyperparametersOn(&gp, xp, yp, session.options().fit, rng);
      (*extra)["fit"] = "pseudo";
    } else {
      bo::FitHyperparameters(&gp, session.options().fit, rng);
      (*extra)["fit"] = "map";
    }
  }
  const double fit_seconds = bo::SecondsSince(t0);
  bo::BoStep step = session.Propose();
  step.seconds_bo += fit_seconds;
  return step;
}

// The arm of an odd iteration (0 = random, 1 = acquisition) and the probability of the random
// arm: EXP3 over the pair for UHE-BO and Random-EXP3, fixed for the other variants.
void ChooseArm(UheVariant variant, PairedExp3& exp3, bo::Rng& rng, int* arm, double* p_random) {
  switch (variant) {
    case UheVariant::kUhe:
    case UheVariant::kRandomExp3:
      *p_random = exp3.Probabilities()(0);
      *arm = exp3.Draw(rng);
      break;
    case UheVariant::kRa:
    case UheVariant::kRandom:
      *arm = 0, *p_random = 1.0;
      break;
    case UheVariant::kMap:
      *arm = 1, *p_random = 0.0;
      break;
  }
}

}  // namespace

void RunUheBo(bo::BoSession& session, const bo::Objective& objective, UheVariant variant,
              bo::Rng& rng, const std::function<bool(const bo::BoStep&)>& callback) {
  if (session.initial_points() < 1)
    throw std::invalid_argument("UHE-BO: the session needs an initial design (D_0)");
  if (session.options().acquisition != bo::AcquisitionKind::kUcb)
    throw std::invalid_argument("UHE-BO: the session must use GP-UCB");
  auto record = [&](bo::BoStep step, nlohmann::json extra) {
    step.extra = std::move(extra);
    const bo::BoStep& s = session.Record(std::move(step));
    if (callback && !callback(s)) session.Stop("callback");
    return s.ok ? session.Score(s.y) : -std::numeric_limits<double>::infinity();
  };
  // D_0: the session's initial design.
  while (!session.done() && session.evaluations() < session.initial_points()) {
    bo::BoStep s = session.Propose();
    bo::BoSession::Evaluate(objective, &s);
    record(std::move(s), {{"t", 0}, {"arm", nullptr}, {"p_random", nullptr}, {"fit", nullptr}});
  }
  if (session.done() || session.gp().num_data() == 0) return;
  const double d0_lo = session.gp().y().minCoeff(), d0_hi = session.gp().y().maxCoeff();
  auto scaled = [&](double score) {
    return d0_hi > d0_lo ? (score - d0_lo) / (d0_hi - d0_lo) : (score > d0_hi ? 1.0 : 0.0);
  };
  PairedExp3 exp3(session.remaining());
  int arm = 1;  // 0 = random, 1 = acquisition
  double p_random = 0.0, previous_score = 0.0;
  for (int t = 1; !session.done(); ++t) {
    const bool odd = t % 2 == 1;
    if (odd) ChooseArm(variant, exp3, rng, &arm, &p_random);
    const bool random_point = variant == UheVariant::kRandom || (odd && arm == 0);
    nlohmann::json extra = {{"t", t},
                            {"arm", variant == UheVariant::kRandom ? nlohmann::json(nullptr)
                                    : arm == 0                     ? nlohmann::json("random")
                                                                   : nlohmann::json("acquisition")},
                            {"p_random", p_random},
                            {"fit", nullptr}};
    bo::BoStep step =
        random_point ? RandomStep(session, rng) : AcquisitionStep(session, variant, rng, &extra);
    bo::BoSession::Evaluate(objective, &step);
    const double score = record(std::move(step), std::move(extra));
    if (!odd && UsesExp3(variant)) exp3.Update(scaled(std::max(score, previous_score)));
    previous_score = score;
  }
}

}  // namespace advbo::algorithms
