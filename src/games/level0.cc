#include "games/level0.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "bo/design.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"
#include "bo/random_features.h"

namespace advbo::games {

RandomSearchStrategy::RandomSearchStrategy(ActionSpace space) : space_(std::move(space)) {}

Eigen::MatrixXd RandomSearchStrategy::Sample(int n, bo::Rng& rng) const {
  return space_.SampleUniform(n, rng);
}

bool RandomSearchStrategy::FiniteDistribution(Eigen::MatrixXd* support,
                                              Eigen::VectorXd* probs) const {
  if (!space_.finite()) return false;
  *support = space_.grid;
  *probs = Eigen::VectorXd::Constant(space_.size(), 1.0 / space_.size());
  return true;
}

std::unique_ptr<Level0Strategy> RandomSearchStrategy::Clone() const {
  return std::make_unique<RandomSearchStrategy>(*this);
}

PointMassStrategy::PointMassStrategy(Eigen::VectorXd action) : action_(std::move(action)) {}

Eigen::MatrixXd PointMassStrategy::Sample(int n, bo::Rng&) const {
  return action_.transpose().replicate(n, 1);
}

bool PointMassStrategy::FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const {
  *support = action_.transpose();
  *probs = Eigen::VectorXd::Ones(1);
  return true;
}

std::unique_ptr<Level0Strategy> PointMassStrategy::Clone() const {
  return std::make_unique<PointMassStrategy>(*this);
}

namespace {
// n grid rows drawn with probabilities p [K].
Eigen::MatrixXd SampleGridRows(const ActionSpace& space, const Eigen::VectorXd& p, int n,
                               bo::Rng& rng) {
  Eigen::MatrixXd out(n, space.dim());
  for (int i = 0; i < n; ++i) out.row(i) = space.grid.row(bo::SampleIndex(p, rng));
  return out;
}

const ActionSpace& RequireFinite(const ActionSpace& s, const char* who) {
  if (!s.finite())
    throw std::invalid_argument(std::string(who) +
                                " needs a finite (grid) action space; use random search on "
                                "continuous spaces");
  return s;
}
}  // namespace

GpMwStrategy::GpMwStrategy(ActionSpace space, bo::GpMwOptions options)
    : space_(RequireFinite(space, "GP-MW")), mw_(space_.size(), options) {}

Eigen::MatrixXd GpMwStrategy::Sample(int n, bo::Rng& rng) const {
  return SampleGridRows(space_, mw_.Probabilities(), n, rng);
}

bool GpMwStrategy::FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const {
  *support = space_.grid;
  *probs = mw_.Probabilities();
  return true;
}

void GpMwStrategy::Observe(const GameHistory& h, int m, const bo::ExactGP& gp, double beta) {
  // Rewards of every own action against the others' actions of the last round.
  const int t = h.rounds() - 1;
  Eigen::MatrixXd joint = h.JointAt(t).transpose().replicate(space_.size(), 1);
  joint.middleCols(h.offset(m), h.dim(m)) = space_.grid;
  mw_.Update(gp, joint, beta);
}

std::unique_ptr<Level0Strategy> GpMwStrategy::Clone() const {
  return std::make_unique<GpMwStrategy>(*this);
}

namespace {
Eigen::MatrixXd RffOfGrid(const ActionSpace& space, double lengthscale, int m, bo::Rng& rng) {
  if (m < 1) throw std::invalid_argument("EXP3: need at least one random feature");
  bo::StationaryKernel k(bo::KernelFamily::kSquaredExponential, space.dim(), false, {}, lengthscale,
                         1.0);
  return bo::RandomFeatures(k, m, rng).Features(space.grid);
}
}  // namespace

Exp3RffStrategy::Exp3RffStrategy(ActionSpace space, double lengthscale, bo::Rng& rng,
                                 int num_features, double eta, double gamma)
    : space_(RequireFinite(space, "EXP3")),
      exp3_(RffOfGrid(space_, lengthscale, num_features, rng), eta, gamma) {}

Eigen::MatrixXd Exp3RffStrategy::Sample(int n, bo::Rng& rng) const {
  return SampleGridRows(space_, exp3_.Probabilities(), n, rng);
}

bool Exp3RffStrategy::FiniteDistribution(Eigen::MatrixXd* support, Eigen::VectorXd* probs) const {
  *support = space_.grid;
  *probs = exp3_.Probabilities();
  return true;
}

void Exp3RffStrategy::Observe(const GameHistory& h, int m, const bo::ExactGP&, double) {
  const int t = h.rounds() - 1;
  exp3_.Update(space_.NearestIndex(h.Action(t, m)), h.PayoffsAt(t)(m));
}

std::unique_ptr<Level0Strategy> Exp3RffStrategy::Clone() const {
  return std::make_unique<Exp3RffStrategy>(*this);
}

OwnActionBoStrategy::OwnActionBoStrategy(ActionSpace space, Acquisition acquisition,
                                         const bo::ExactGP& prior, int candidates,
                                         uint64_t candidate_seed, BeliefOptions belief)
    : space_(std::move(space)), acq_(acquisition), prior_(prior), options_(belief) {
  if (candidates < 1) throw std::invalid_argument("BO level-0 strategy: need >= 1 candidate");
  bo::Rng rng(candidate_seed);
  if (space_.finite() && space_.size() <= candidates) {
    cands_ = space_.grid;
  } else if (space_.finite()) {
    cands_ = SampleGridRows(space_, Eigen::VectorXd::Constant(space_.size(), 1.0 / space_.size()),
                            candidates, rng);
  } else {
    cands_ = bo::MakeDesign(bo::DesignKind::kSobol, candidates, space_.lower, space_.upper, rng);
  }
  prior_.SetData(Eigen::MatrixXd(0, space_.dim()), Eigen::VectorXd(0));
}

Eigen::VectorXd OwnActionBoStrategy::UcbMaximiser() const {
  Eigen::VectorXd mu, var;
  gp().Predict(cands_, &mu, &var);
  Eigen::Index best;
  (mu.array() + std::sqrt(std::max(0.0, beta_)) * var.cwiseMax(0.0).cwiseSqrt().array())
      .maxCoeff(&best);
  return cands_.row(best).transpose();
}

Eigen::MatrixXd OwnActionBoStrategy::Sample(int n, bo::Rng& rng) const {
  Eigen::MatrixXd out(n, space_.dim());
  if (gp().num_data() == 0) {
    std::uniform_int_distribution<int> pick(0, static_cast<int>(cands_.rows()) - 1);
    for (int i = 0; i < n; ++i) out.row(i) = cands_.row(pick(rng));
    return out;
  }
  if (acq_ == Acquisition::kUcb) return UcbMaximiser().transpose().replicate(n, 1);
  const Eigen::MatrixXd f = gp().SamplePosterior(cands_, n, rng);  // [C, n]
  for (int i = 0; i < n; ++i) {
    Eigen::Index best;
    f.col(i).maxCoeff(&best);
    out.row(i) = cands_.row(best);
  }
  return out;
}

bool OwnActionBoStrategy::FiniteDistribution(Eigen::MatrixXd* support,
                                             Eigen::VectorXd* probs) const {
  if (acq_ != Acquisition::kUcb || gp().num_data() == 0) return false;
  *support = UcbMaximiser().transpose();
  *probs = Eigen::VectorXd::Ones(1);
  return true;
}

void OwnActionBoStrategy::Observe(const GameHistory& h, int m, const bo::ExactGP&, double beta) {
  beta_ = beta;
  if (!belief_) {
    belief_.emplace(m, space_.dim(), prior_, options_, BeliefInputs::kOwnAction);
  } else if (belief_->agent() != m) {
    throw std::invalid_argument("BO level-0 strategy: observed as agent " + std::to_string(m) +
                                " after agent " + std::to_string(belief_->agent()));
  }
  belief_->Update(h);
}

std::unique_ptr<Level0Strategy> OwnActionBoStrategy::Clone() const {
  return std::make_unique<OwnActionBoStrategy>(*this);
}

const std::vector<std::string>& Level0Names() {
  static const std::vector<std::string> names = {"random", "gpmw", "exp3", "gpucb", "ts", "none"};
  return names;
}

void Level0Options::Validate() const {
  if (!(rff_lengthscale > 0) || !std::isfinite(rff_lengthscale))
    throw std::invalid_argument("level-0 options: the RFF lengthscale must be finite and > 0");
  if (candidates < 1) throw std::invalid_argument("level-0 options: need >= 1 candidate");
  if (!(gp_noise > 0) || !std::isfinite(gp_noise))
    throw std::invalid_argument("level-0 options: the GP noise variance must be finite and > 0");
  if (!(gp_lengthscale > 0) || !std::isfinite(gp_lengthscale))
    throw std::invalid_argument("level-0 options: the GP lengthscale must be finite and > 0");
  belief.Validate();
}

std::unique_ptr<Level0Strategy> MakeLevel0(const std::string& name, const ActionSpace& space,
                                           const Level0Options& o, bo::Rng& rng) {
  o.Validate();
  if (name == "random") return std::make_unique<RandomSearchStrategy>(space);
  if (name == "gpmw") return std::make_unique<GpMwStrategy>(space);
  if (name == "exp3") return std::make_unique<Exp3RffStrategy>(space, o.rff_lengthscale, rng);
  if (name == "gpucb" || name == "ts") {
    bo::ExactGP prior(
        std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, space.dim(),
                                               true, std::vector<int>{}, o.gp_lengthscale, 1.0),
        o.gp_noise, o.standardize);
    return std::make_unique<OwnActionBoStrategy>(space,
                                                 name == "gpucb"
                                                     ? OwnActionBoStrategy::Acquisition::kUcb
                                                     : OwnActionBoStrategy::Acquisition::kThompson,
                                                 prior, o.candidates, o.candidate_seed, o.belief);
  }
  if (name == "none") return std::make_unique<PointMassStrategy>((space.lower + space.upper) / 2);
  std::string all;
  for (const auto& n : Level0Names()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown level-0 strategy '" + name + "' (use " + all + ")");
}

std::unique_ptr<Level0Strategy> MakeLevel0(const std::string& name, const ActionSpace& space,
                                           double lengthscale, bo::Rng& rng) {
  Level0Options o;
  o.rff_lengthscale = lengthscale;
  return MakeLevel0(name, space, o, rng);
}

}  // namespace advbo::games
