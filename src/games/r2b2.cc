#include "games/r2b2.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace advbo::games {
namespace {

// Joint rows per prediction block in ExpectedUcbScores.
constexpr long kBlockRows = 16384;

}  // namespace

void R2b2Options::Validate() const {
  if (level < 0) throw std::invalid_argument("R2-B2: negative reasoning level");
  if (samples < 1) throw std::invalid_argument("R2-B2: need at least one sample");
  if (candidates < 1) throw std::invalid_argument("R2-B2: need at least one candidate");
  if (own_candidates < 0) throw std::invalid_argument("R2-B2: own_candidates must be >= 0");
  if (exact_limit < 0) throw std::invalid_argument("R2-B2: exact_limit must be >= 0");
  for (int l : other_levels)
    if (l != 0 && l != 1)
      throw std::invalid_argument("R2-B2: assumed levels of the others must be 0 or 1");
}

R2b2Agent::R2b2Agent(int self, std::vector<ActionSpace> spaces, std::vector<PayoffBelief> beliefs,
                     std::vector<std::unique_ptr<Level0Strategy>> level0, R2b2Options options,
                     bool moves_second)
    : self_(self),
      spaces_(std::move(spaces)),
      beliefs_(std::move(beliefs)),
      level0_(std::move(level0)),
      options_(std::move(options)),
      moves_second_(moves_second) {
  const int m_agents = static_cast<int>(spaces_.size());
  if (m_agents < 2) throw std::invalid_argument("R2-B2: a game needs at least two agents");
  if (self_ < 0 || self_ >= m_agents)
    throw std::invalid_argument("R2-B2: agent index out of range");
  if (static_cast<int>(beliefs_.size()) != m_agents || static_cast<int>(level0_.size()) != m_agents)
    throw std::invalid_argument("R2-B2: need one payoff belief and one level-0 strategy per agent");
  for (int m = 0; m < m_agents; ++m) {
    if (beliefs_[m].agent() != m) throw std::invalid_argument("R2-B2: beliefs out of agent order");
    if (!level0_[m]) throw std::invalid_argument("R2-B2: null level-0 strategy");
  }
  options_.Validate();
  if (m_agents > 2 && options_.level > 2)
    throw std::invalid_argument(
        "R2-B2: with more than two agents levels above 2 are not defined "
        "(App. E.2)");
  if (!options_.agent_betas.empty() && static_cast<int>(options_.agent_betas.size()) != m_agents)
    throw std::invalid_argument("R2-B2: agent_betas needs one entry per agent");
  if (!options_.other_levels.empty()) {
    if (static_cast<int>(options_.other_levels.size()) != m_agents)
      throw std::invalid_argument("R2-B2: other_levels needs one entry per agent");
    for (int m = 0; m < m_agents; ++m)
      if (m != self_ && options_.other_levels[m] != 0 && options_.other_levels[m] != 1)
        throw std::invalid_argument("R2-B2: assumed levels of the others must be 0 or 1");
  }
  offsets_.push_back(0);
  for (const auto& s : spaces_) offsets_.push_back(offsets_.back() + s.dim());
  joint_dim_ = offsets_.back();
  for (const auto& s : spaces_) domain_size_ = s.finite() ? domain_size_ * s.size() : 0.0;
  for (int m = 0; m < m_agents; ++m) {
    const int n =
        m == self_ && options_.own_candidates > 0 ? options_.own_candidates : options_.candidates;
    candidates_.push_back(CandidateActions(
        spaces_[m], n, bo::DeriveSeed(options_.candidate_seed, static_cast<uint64_t>(m))));
  }
  const ActionSpace& own = spaces_[self_];
  if (options_.vertex_candidates && !own.finite()) {
    if (own.dim() > 12)
      throw std::invalid_argument("R2-B2: vertex candidates need an action dimension <= 12");
    const int v = 1 << own.dim();
    Eigen::MatrixXd& c = candidates_[self_];
    const Eigen::Index base = c.rows();
    c.conservativeResize(base + v, Eigen::NoChange);
    for (int k = 0; k < v; ++k)
      for (int j = 0; j < own.dim(); ++j)
        c(base + k, j) = (k >> j) & 1 ? own.upper(j) : own.lower(j);
  }
}

std::string R2b2Agent::name() const {
  std::string n = "r2b2:" + std::to_string(options_.level);
  if (options_.lite && options_.level == 1) n += "-lite";
  return n + "(" + level0_[self_]->name() + ")";
}

Eigen::VectorXd R2b2Agent::ExpectedUcbScores(int m, const Eigen::MatrixXd& cands,
                                             const Eigen::MatrixXd& others,
                                             const Eigen::VectorXd& w, int round) const {
  const long s_rows = others.rows();
  if (s_rows < 1 || w.size() != s_rows || others.cols() != joint_dim_ ||
      cands.cols() != spaces_.at(m).dim())
    throw std::invalid_argument("R2-B2: inconsistent candidate / opponent-sample shapes");
  const double sqrt_beta = std::sqrt(std::max(0.0, BetaOf(m, round)));
  const auto& gp = beliefs_[m].gp();
  const long c_rows = cands.rows();
  const long per_block = std::max(1L, kBlockRows / s_rows);
  Eigen::VectorXd scores(c_rows);
  Eigen::VectorXd mu, var;
  for (long c0 = 0; c0 < c_rows; c0 += per_block) {
    const long cb = std::min(per_block, c_rows - c0);
    Eigen::MatrixXd x(cb * s_rows, joint_dim_);
    for (long c = 0; c < cb; ++c) {
      x.middleRows(c * s_rows, s_rows) = others;
      x.block(c * s_rows, offsets_[m], s_rows, cands.cols()) =
          cands.row(c0 + c).replicate(s_rows, 1);
    }
    gp.Predict(x, &mu, &var);
    const Eigen::ArrayXd ucb = mu.array() + sqrt_beta * var.cwiseMax(0.0).cwiseSqrt().array();
    for (long c = 0; c < cb; ++c) scores(c0 + c) = w.dot(ucb.segment(c * s_rows, s_rows).matrix());
  }
  return scores;
}

Eigen::VectorXd R2b2Agent::BestResponse(int m, const Eigen::MatrixXd& others,
                                        const Eigen::VectorXd& w, int round) const {
  const Eigen::MatrixXd& cands = candidates_[m];
  Eigen::Index best;
  ExpectedUcbScores(m, cands, others, w, round).maxCoeff(&best);
  return cands.row(best).transpose();
}

void R2b2Agent::OthersDistribution(int m, const std::vector<Eigen::VectorXd>& fixed, bool lite,
                                   bo::Rng& rng, Eigen::MatrixXd* others,
                                   Eigen::VectorXd* weights) const {
  const int m_agents = static_cast<int>(spaces_.size());
  std::vector<Eigen::MatrixXd> support(m_agents);
  std::vector<Eigen::VectorXd> probs(m_agents);
  bool all_finite = true;
  double product = 1.0;
  for (int j = 0; j < m_agents; ++j) {
    if (j == m) continue;
    if (fixed[j].size() > 0) {
      support[j] = fixed[j].transpose();
      probs[j] = Eigen::VectorXd::Ones(1);
    } else if (level0_[j]->FiniteDistribution(&support[j], &probs[j])) {
      product *= static_cast<double>(support[j].rows());
    } else {
      all_finite = false;
    }
  }
  if (!lite && all_finite && product <= static_cast<double>(options_.exact_limit)) {
    // Exact expectation (8.3): enumerate the product of the finite supports.
    std::vector<int> idx(m_agents, 0);
    std::vector<Eigen::VectorXd> rows;
    std::vector<double> ws;
    while (true) {
      double wt = 1.0;
      Eigen::VectorXd row = Eigen::VectorXd::Zero(joint_dim_);
      for (int j = 0; j < m_agents; ++j) {
        if (j == m) continue;
        wt *= probs[j](idx[j]);
        row.segment(offsets_[j], spaces_[j].dim()) = support[j].row(idx[j]).transpose();
      }
      if (wt > 0) {
        rows.push_back(row);
        ws.push_back(wt);
      }
      int j = 0;
      for (; j < m_agents; ++j) {
        if (j == m) continue;
        if (++idx[j] < support[j].rows()) break;
        idx[j] = 0;
      }
      if (j == m_agents) break;
    }
    others->resize(static_cast<Eigen::Index>(rows.size()), joint_dim_);
    weights->resize(static_cast<Eigen::Index>(ws.size()));
    double total = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      others->row(i) = rows[i].transpose();
      (*weights)(i) = ws[i];
      total += ws[i];
    }
    *weights /= total;
    return;
  }
  // Monte Carlo approximation with S samples (R2-B2-Lite: one sample, eq. 8.8).
  const int s = lite ? 1 : options_.samples;
  others->setZero(s, joint_dim_);
  for (int j = 0; j < m_agents; ++j) {
    if (j == m) continue;
    others->middleCols(offsets_[j], spaces_[j].dim()) =
        fixed[j].size() > 0 ? Eigen::MatrixXd(fixed[j].transpose().replicate(s, 1))
                            : level0_[j]->Sample(s, rng);
  }
  *weights = Eigen::VectorXd::Constant(s, 1.0 / s);
}

Eigen::VectorXd R2b2Agent::Simulate(int m, int level, const GameHistory& h,
                                    const std::vector<Eigen::VectorXd>& revealed,
                                    bo::Rng& rng) const {
  return Decide(m, level, h, revealed, rng, nullptr);
}

Eigen::VectorXd R2b2Agent::Decide(int m, int level, const GameHistory& h,
                                  const std::vector<Eigen::VectorXd>& revealed, bo::Rng& rng,
                                  std::vector<Eigen::VectorXd>* assumed) const {
  const int m_agents = static_cast<int>(spaces_.size());
  if (m < 0 || m >= m_agents || level < 0) throw std::invalid_argument("R2-B2: bad simulation");
  if (static_cast<int>(revealed.size()) == m_agents && revealed[m].size() > 0) return revealed[m];
  if (level == 0) return level0_[m]->Sample(1, rng).row(0).transpose();
  const int round = static_cast<int>(h.total_rounds()) + 1;  // beta_t counts every round
  std::vector<Eigen::VectorXd> fixed(m_agents);
  if (static_cast<int>(revealed.size()) == m_agents) fixed = revealed;
  const bool lite = options_.lite && m == self_ && level == 1;
  if (level >= 2) {
    if (m_agents == 2) {
      const int j = 1 - m;
      if (fixed[j].size() == 0) fixed[j] = Simulate(j, level - 1, h, revealed, rng);
    } else {
      // Eq. E.3: agents assumed at level 1 are simulated (they treat all others as level 0,
      // E.1); agents assumed at level 0 are averaged over.
      for (int j = 0; j < m_agents; ++j) {
        if (j == m || fixed[j].size() > 0) continue;
        const int lj = options_.other_levels.empty() ? 1 : options_.other_levels[j];
        if (lj == 1) fixed[j] = Simulate(j, 1, h, revealed, rng);
      }
    }
  }
  Eigen::MatrixXd others;
  Eigen::VectorXd w;
  OthersDistribution(m, fixed, lite, rng, &others, &w);
  if (assumed && others.rows() == 1)  // one assumed joint action of the others
    for (int j = 0; j < m_agents; ++j)
      if (j != m) (*assumed)[j] = others.row(0).segment(offsets_[j], spaces_[j].dim()).transpose();
  return BestResponse(m, others, w, round);
}

Eigen::VectorXd R2b2Agent::Act(const GameHistory& h, const std::vector<Eigen::VectorXd>& revealed,
                               bo::Rng& rng) {
  const int m_agents = static_cast<int>(spaces_.size());
  std::vector<Eigen::VectorXd> shown = revealed;
  shown.resize(m_agents);
  shown[self_] = Eigen::VectorXd();
  predicted_.assign(m_agents, Eigen::VectorXd());
  if (options_.level >= 2 && m_agents == 2) {
    const int j = 1 - self_;
    last_simulated_ =
        shown[j].size() > 0 ? shown[j] : Simulate(j, options_.level - 1, h, shown, rng);
    shown[j] = last_simulated_;
  }
  if (options_.level == 0) {  // its own level-0 strategy: no model of the others
    for (int j = 0; j < m_agents; ++j)
      if (j != self_ && shown[j].size() > 0) predicted_[j] = shown[j];
    return Simulate(self_, 0, h, shown, rng);
  }
  return Decide(self_, options_.level, h, shown, rng, &predicted_);
}

Eigen::VectorXd R2b2Agent::PredictedAction(int m) const {
  return m >= 0 && m < static_cast<int>(predicted_.size()) ? predicted_[m] : Eigen::VectorXd();
}

double R2b2Agent::BetaOf(int m, int round) const {
  // r2b2_ref: the reference code's d is the agent's own action dimension (its UCB scores
  // own actions x with d = x.shape[1]); every other policy gets the joint dimension.
  const bo::ExplorationWeight& beta =
      options_.agent_betas.empty() ? options_.beta : options_.agent_betas.at(m);
  const int d = beta.policy == bo::BetaPolicy::kR2b2Ref ? spaces_.at(m).dim() : joint_dim_;
  return beta.Beta(round, d, domain_size_);
}

void R2b2Agent::Observe(const GameHistory& h) {
  const int m_agents = static_cast<int>(spaces_.size());
  const int t = std::max(1, static_cast<int>(h.total_rounds()));
  for (int m = 0; m < m_agents; ++m) {
    const bool needed = m == self_ || options_.level >= 2 || level0_[m]->name() == "gpmw";
    if (needed) beliefs_[m].Update(h);
    level0_[m]->Observe(h, m, beliefs_[m].gp(), BetaOf(m, t));
  }
}

}  // namespace advbo::games
