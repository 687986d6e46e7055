#include "games/game.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "bo/design.h"

namespace advbo::games {

ActionSpace ActionSpace::Box(int d, double lo, double hi) {
  if (d < 1 || !(lo <= hi)) throw std::invalid_argument("ActionSpace::Box: need d >= 1, lo <= hi");
  ActionSpace s;
  s.lower = Eigen::VectorXd::Constant(d, lo);
  s.upper = Eigen::VectorXd::Constant(d, hi);
  return s;
}

ActionSpace ActionSpace::Grid1d(int k, double lo, double hi) {
  if (k < 1 || !(lo <= hi))
    throw std::invalid_argument("ActionSpace::Grid1d: need k >= 1, lo <= hi");
  ActionSpace s = Box(1, lo, hi);
  s.grid = Eigen::VectorXd::LinSpaced(k, lo, hi);
  return s;
}

Eigen::MatrixXd ActionSpace::SampleUniform(int n, bo::Rng& rng) const {
  Eigen::MatrixXd out(n, dim());
  if (finite()) {
    std::uniform_int_distribution<int> pick(0, size() - 1);
    for (int i = 0; i < n; ++i) out.row(i) = grid.row(pick(rng));
    return out;
  }
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < dim(); ++j) out(i, j) = lower(j) + u(rng) * (upper(j) - lower(j));
  return out;
}

int ActionSpace::NearestIndex(const Eigen::VectorXd& x) const {
  if (!finite()) throw std::invalid_argument("ActionSpace::NearestIndex: continuous space");
  Eigen::Index i;
  (grid.rowwise() - x.transpose()).rowwise().squaredNorm().minCoeff(&i);
  return static_cast<int>(i);
}

bool ActionSpace::Contains(const Eigen::VectorXd& x) const {
  if (x.size() != dim() || !x.allFinite()) return false;
  if (finite()) {
    for (int i = 0; i < size(); ++i)
      if ((grid.row(i).transpose() - x).cwiseAbs().maxCoeff() <= 1e-12) return true;
    return false;
  }
  return (x.array() >= lower.array() - 1e-12).all() && (x.array() <= upper.array() + 1e-12).all();
}

Eigen::MatrixXd CandidateActions(const ActionSpace& space, int n, uint64_t seed) {
  if (n < 1) throw std::invalid_argument("CandidateActions: need at least one candidate");
  bo::Rng rng(seed);
  if (space.finite() && space.size() <= n) return space.grid;
  if (space.finite()) {  // a fixed random subset of a large grid (e.g. 100 x 100 latent actions)
    std::vector<int> idx(space.size());
    for (int i = 0; i < space.size(); ++i) idx[i] = i;
    std::shuffle(idx.begin(), idx.end(), rng);
    Eigen::MatrixXd sub(n, space.dim());
    for (int i = 0; i < n; ++i) sub.row(i) = space.grid.row(idx[i]);
    return sub;
  }
  return bo::MakeDesign(bo::DesignKind::kSobol, n, space.lower, space.upper, rng);
}

Eigen::VectorXd GameEnvironment::CandidatePayoffs(int, const std::vector<Eigen::VectorXd>&,
                                                  const Eigen::MatrixXd&) {
  throw std::logic_error("this game cannot score candidate actions outside a round");
}

GameHistory::GameHistory(std::vector<int> dims) : dims_(std::move(dims)) {
  if (dims_.empty()) throw std::invalid_argument("GameHistory: no agents");
  offsets_.push_back(0);
  for (int d : dims_) {
    if (d < 1) throw std::invalid_argument("GameHistory: action dimension < 1");
    offsets_.push_back(offsets_.back() + d);
  }
}

void GameHistory::Add(const Eigen::VectorXd& joint, const Eigen::VectorXd& payoffs) {
  if (joint.size() != joint_dim() || payoffs.size() != num_agents())
    throw std::invalid_argument("GameHistory::Add: wrong joint-action or payoff size");
  if (!joint.allFinite() || !payoffs.allFinite())
    throw std::invalid_argument("GameHistory::Add: non-finite action or payoff");
  joint_.push_back(joint);
  payoffs_.push_back(payoffs);
}

void GameHistory::DropOldest(int k) {
  if (k < 0 || k > rounds())
    throw std::invalid_argument("GameHistory::DropOldest: k outside 0..rounds()");
  joint_.erase(joint_.begin(), joint_.begin() + k);
  payoffs_.erase(payoffs_.begin(), payoffs_.begin() + k);
  dropped_ += k;
}

Eigen::MatrixXd GameHistory::Joint() const {
  Eigen::MatrixXd x(rounds(), joint_dim());
  for (int t = 0; t < rounds(); ++t) x.row(t) = joint_[t].transpose();
  return x;
}

Eigen::VectorXd GameHistory::Payoffs(int m) const {
  Eigen::VectorXd y(rounds());
  for (int t = 0; t < rounds(); ++t) y(t) = payoffs_[t](m);
  return y;
}

Eigen::VectorXd GameHistory::Action(int t, int m) const {
  return joint_.at(t).segment(offset(m), dim(m));
}

Eigen::MatrixXd GameHistory::Actions(int m) const {
  Eigen::MatrixXd x(rounds(), dim(m));
  for (int t = 0; t < rounds(); ++t) x.row(t) = joint_[t].segment(offset(m), dim(m)).transpose();
  return x;
}

void GameOptions::Validate() const {
  if (rounds < 0 || init_rounds < 0 || !(payoff_noise >= 0) || !std::isfinite(payoff_noise))
    throw std::invalid_argument("RunRepeatedGame: negative rounds or noise");
}

std::vector<RoundRecord> RunRepeatedGame(GameEnvironment& env, const std::vector<Agent*>& agents,
                                         const GameOptions& opt, bo::Rng& rng,
                                         const std::function<void(const RoundRecord&)>& on_round) {
  const int m_agents = env.num_agents();
  if (static_cast<int>(agents.size()) != m_agents)
    throw std::invalid_argument("RunRepeatedGame: " + std::to_string(agents.size()) +
                                " agents for a " + std::to_string(m_agents) + "-agent game");
  opt.Validate();
  std::vector<int> dims;
  for (int m = 0; m < m_agents; ++m) dims.push_back(env.space(m).dim());
  GameHistory history(dims);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<RoundRecord> records;

  auto play = [&](int round, bool init) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Eigen::VectorXd> actions(m_agents), revealed(m_agents);
    if (init) {
      for (int m = 0; m < m_agents; ++m) actions[m] = env.space(m).SampleUniform(1, rng).row(0);
    } else {
      for (int pass = 0; pass < 2; ++pass) {
        for (int m = 0; m < m_agents; ++m) {
          if (agents[m]->moves_second() != (pass == 1)) continue;
          std::vector<Eigen::VectorXd> shown(m_agents);
          if (pass == 1) shown = revealed;
          actions[m] = agents[m]->Act(history, shown, rng);
          if (!env.space(m).Contains(actions[m]))
            throw std::invalid_argument("agent " + std::to_string(m) + " (" + agents[m]->name() +
                                        ") chose an action outside its action space");
          if (pass == 0) revealed[m] = actions[m];
        }
      }
    }
    RoundRecord rec;
    rec.round = round;
    rec.init = init;
    rec.payoffs = env.Payoffs(actions);
    if (rec.payoffs.size() != m_agents || !rec.payoffs.allFinite())
      throw std::runtime_error("game environment returned invalid payoffs in round " +
                               std::to_string(round));
    rec.observed = rec.payoffs;
    if (opt.payoff_noise > 0)
      for (int m = 0; m < m_agents; ++m) rec.observed(m) += opt.payoff_noise * noise(rng);
    Eigen::VectorXd joint(history.joint_dim());
    for (int m = 0; m < m_agents; ++m) joint.segment(history.offset(m), dims[m]) = actions[m];
    history.Add(joint, rec.observed);
    for (Agent* a : agents) a->Observe(history);
    rec.details = env.RoundDetails(actions, rec.payoffs);
    rec.actions = std::move(actions);
    rec.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (on_round) on_round(rec);
    records.push_back(std::move(rec));
  };
  for (int i = 0; i < opt.init_rounds; ++i) play(i + 1 - opt.init_rounds, true);
  for (int t = 1; t <= opt.rounds; ++t) play(t, false);
  return records;
}

}  // namespace advbo::games
