#include "games/level0.h"

#include <stdexcept>

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

bool PointMassStrategy::FiniteDistribution(Eigen::MatrixXd* support,
                                           Eigen::VectorXd* probs) const {
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
  bo::StationaryKernel k(bo::KernelFamily::kSquaredExponential, space.dim(), false, {},
                         lengthscale, 1.0);
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

std::unique_ptr<Level0Strategy> MakeLevel0(const std::string& name, const ActionSpace& space,
                                           double lengthscale, bo::Rng& rng) {
  if (name == "random") return std::make_unique<RandomSearchStrategy>(space);
  if (name == "gpmw") return std::make_unique<GpMwStrategy>(space);
  if (name == "exp3") return std::make_unique<Exp3RffStrategy>(space, lengthscale, rng);
  throw std::invalid_argument("unknown level-0 strategy '" + name +
                              "' (use random, gpmw or exp3)");
}

}  // namespace advbo::games
