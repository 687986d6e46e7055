#include "games/synthetic.h"

#include <algorithm>
#include <stdexcept>

#include "bo/enum_names.h"
#include "bo/grid_sample.h"
#include "bo/kernel.h"

namespace advbo::games {

namespace {
constexpr bo::NamedValue<GameType> kGameTypeNames[] = {
    {GameType::kCommonPayoff, "common"},    {GameType::kGeneralSum, "general"},
    {GameType::kConstantSum, "constant"},   {GameType::kCommonPayoff, "common-payoff"},
    {GameType::kGeneralSum, "general-sum"}, {GameType::kConstantSum, "constant-sum"}};
}  // namespace

GameType ParseGameType(const std::string& s) {
  return bo::ParseNamed(kGameTypeNames, s, "game type");
}

std::string GameTypeName(GameType t) { return bo::NameOf(kGameTypeNames, t); }

namespace {

// A GP draw on the grid (bo::SampleGpOnGrid), scaled into [0, 1].
Eigen::MatrixXd SampleScaled(const Eigen::VectorXd& axis, double lengthscale, bo::Rng& rng) {
  const Eigen::MatrixXd f = bo::SampleGpOnGrid(axis, axis, lengthscale, 1.0, rng);
  const double lo = f.minCoeff(), hi = f.maxCoeff();
  return (f.array() - lo) / std::max(hi - lo, 1e-300);
}

}  // namespace

SyntheticGame::SyntheticGame(GameType type, bo::Rng& rng, int grid, double lengthscale)
    : type_(type), lengthscale_(lengthscale), space_(ActionSpace::Grid1d(grid, 0.0, 1.0)) {
  if (grid < 2 || !(lengthscale > 0))
    throw std::invalid_argument("SyntheticGame: need grid >= 2 and lengthscale > 0");
  const Eigen::VectorXd axis = space_.grid.col(0);
  f1_ = SampleScaled(axis, lengthscale, rng);
  switch (type) {
    case GameType::kCommonPayoff:
      f2_ = f1_;
      break;
    case GameType::kGeneralSum:
      f2_ = SampleScaled(axis, lengthscale, rng);
      break;
    case GameType::kConstantSum:
      f2_ = 1.0 - f1_.array();
      break;
  }
}

Eigen::VectorXd SyntheticGame::Payoffs(const std::vector<Eigen::VectorXd>& a) {
  if (a.size() != 2) throw std::invalid_argument("SyntheticGame: two actions expected");
  const int i = space_.NearestIndex(a[0]), j = space_.NearestIndex(a[1]);
  return Eigen::Vector2d(f1_(i, j), f2_(i, j));
}

Eigen::VectorXd SyntheticGame::CandidatePayoffs(int m, const std::vector<Eigen::VectorXd>& a,
                                                const Eigen::MatrixXd& candidates) {
  if (a.size() != 2 || (m != 0 && m != 1))
    throw std::invalid_argument("SyntheticGame: two agents expected");
  const int other = space_.NearestIndex(a[1 - m]);
  Eigen::VectorXd out(candidates.rows());
  for (Eigen::Index k = 0; k < candidates.rows(); ++k) {
    const int own = space_.NearestIndex(candidates.row(k).transpose());
    out(k) = m == 0 ? f1_(own, other) : f2_(other, own);
  }
  return out;
}

nlohmann::json SyntheticGame::RoundDetails(const std::vector<Eigen::VectorXd>&,
                                           const Eigen::VectorXd& payoffs) {
  return {{"regret", {f1_.maxCoeff() - payoffs(0), f2_.maxCoeff() - payoffs(1)}}};
}

bo::ExactGP SyntheticGame::TruePrior(double noise_variance) const {
  return bo::ExactGP(
      std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 2, false,
                                             std::vector<int>{}, lengthscale_, 1.0),
      noise_variance, true);
}

}  // namespace advbo::games
