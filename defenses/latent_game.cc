#include "defenses/latent_game.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace advbo::defenses {
namespace {

// Clips x into [anchor - eps, anchor + eps] intersected with [0, 1]; returns the L_inf
// distance to the anchor afterwards.
double ClipTo(std::vector<float>* x, const std::vector<float>& anchor, double eps) {
  double linf = 0;
  for (size_t i = 0; i < x->size(); ++i) {
    const float lo = std::max(0.0f, static_cast<float>(anchor[i] - eps));
    const float hi = std::min(1.0f, static_cast<float>(anchor[i] + eps));
    (*x)[i] = std::clamp((*x)[i], lo, hi);
    linf = std::max(linf, std::abs(static_cast<double>((*x)[i]) - anchor[i]));
  }
  return linf;
}

}  // namespace

void LatentGameOptions::Validate() const {
  if (!(epsilon > 0 && epsilon <= 1) || !(action_bound > 0))
    throw std::invalid_argument("latent game: need eps in (0, 1] and a positive action bound");
}

LatentGame::LatentGame(const oracle::Classifier& model, const oracle::Autoencoder& attacker_vae,
                       const oracle::Autoencoder& defender_vae, const float* clean, int true_class,
                       LatentGameOptions options)
    : model_(model),
      att_(attacker_vae),
      def_(defender_vae),
      true_class_(true_class),
      opt_(options) {
  if (att_.input_size() != model.input_size() || def_.input_size() != model.input_size())
    throw std::invalid_argument("latent game: the VAEs' image size differs from the model's");
  opt_.Validate();
  if (true_class < 0 || true_class >= model.num_classes())
    throw std::invalid_argument("latent game: true class out of range");
  clean_.assign(clean, clean + model.input_size());
  z0_ = att_.Encode(clean_.data(), 1).row(0).transpose();
  spaces_.push_back(
      games::ActionSpace::Box(att_.latent_dim(), -opt_.action_bound, opt_.action_bound));
  games::ActionSpace defender =
      games::ActionSpace::Box(def_.latent_dim(), -opt_.action_bound, opt_.action_bound);
  if (opt_.strength_action) {
    const int z = def_.latent_dim();
    defender.lower.conservativeResize(z + 1);
    defender.upper.conservativeResize(z + 1);
    defender.lower(z) = 0.0;
    defender.upper(z) = 1.0;
  }
  spaces_.push_back(std::move(defender));
}

void LatentGame::Images(const Eigen::VectorXd& a1, const Eigen::VectorXd& a2,
                        std::vector<float>* x1, std::vector<float>* x2) const {
  const int z2 = def_.latent_dim();
  if (a1.size() != att_.latent_dim() || a2.size() != z2 + (opt_.strength_action ? 1 : 0))
    throw std::invalid_argument("latent game: action size differs from the latent dimension");
  *x1 = att_.Decode((z0_ + a1).transpose());
  last_linf1_ = ClipTo(x1, clean_, opt_.epsilon);
  *x2 = DefendedImages(*x1, a2.transpose());
  if (opt_.strength_action && opt_.defender_active) last_strength_ = std::clamp(a2(z2), 0.0, 1.0);
  last_linf2_ = 0;
  for (size_t i = 0; i < x2->size(); ++i)
    last_linf2_ = std::max(last_linf2_, std::abs(static_cast<double>((*x2)[i]) - (*x1)[i]));
}

std::vector<float> LatentGame::DefendedImages(const std::vector<float>& x1,
                                              const Eigen::MatrixXd& a2) const {
  const int z2 = def_.latent_dim();
  const long k = a2.rows();
  const size_t d = x1.size();
  if (a2.cols() != z2 + (opt_.strength_action ? 1 : 0))
    throw std::invalid_argument("latent game: action size differs from the latent dimension");
  std::vector<float> out;
  if (!opt_.defender_active) {  // no defender stage: every action passes x1 through
    out.reserve(k * d);
    for (long r = 0; r < k; ++r) out.insert(out.end(), x1.begin(), x1.end());
    return out;
  }
  const Eigen::RowVectorXd z1 = def_.Encode(x1.data(), 1).row(0);
  out = def_.Decode(a2.leftCols(z2).rowwise() + z1);
  std::vector<float> x2(d);
  for (long r = 0; r < k; ++r) {
    std::copy(out.begin() + r * d, out.begin() + (r + 1) * d, x2.begin());
    if (opt_.strength_action) {
      const float w = static_cast<float>(std::clamp(a2(r, z2), 0.0, 1.0));
      if (w < 1.0f)  // w = 1 is exactly the thesis' move
        for (size_t i = 0; i < d; ++i) x2[i] = x1[i] + w * (x2[i] - x1[i]);
    }
    ClipTo(&x2, x1, opt_.epsilon);
    std::copy(x2.begin(), x2.end(), out.begin() + r * d);
  }
  return out;
}

Eigen::VectorXd LatentGame::CandidatePayoffs(int m, const std::vector<Eigen::VectorXd>& actions,
                                             const Eigen::MatrixXd& candidates) {
  if (actions.size() != 2 || (m != 0 && m != 1))
    throw std::invalid_argument("latent game: two agents expected");
  const long k = candidates.rows();
  const size_t d = clean_.size();
  std::vector<float> x2;
  if (m == 1) {  // the attacker's image once, every defender candidate on it
    std::vector<float> x1 = att_.Decode((z0_ + actions[0]).transpose());
    ClipTo(&x1, clean_, opt_.epsilon);
    x2 = DefendedImages(x1, candidates);
  } else {
    x2.reserve(k * d);
    for (long r = 0; r < k; ++r) {
      std::vector<float> x1 = att_.Decode((z0_ + candidates.row(r).transpose()).transpose());
      ClipTo(&x1, clean_, opt_.epsilon);
      const std::vector<float> y = DefendedImages(x1, actions[1].transpose());
      x2.insert(x2.end(), y.begin(), y.end());
    }
  }
  const Eigen::MatrixXd lp = model_.LogProbabilities(x2.data(), static_cast<int>(k));
  candidate_queries_ += k;
  Eigen::VectorXd pay(k);
  for (long r = 0; r < k; ++r) {
    double s = 0;
    for (Eigen::Index c = 0; c < lp.cols(); ++c)
      if (c != true_class_) s = std::max(s, std::exp(lp(r, c)));
    pay(r) = m == 0 ? s : 1.0 - s;
  }
  return pay;
}

Eigen::VectorXd LatentGame::Payoffs(const std::vector<Eigen::VectorXd>& actions) {
  if (actions.size() != 2) throw std::invalid_argument("latent game: two actions expected");
  std::vector<float> x1, x2;
  Images(actions[0], actions[1], &x1, &x2);
  const Eigen::RowVectorXd lp = model_.LogProbabilities(x2.data(), 1).row(0);
  ++queries_;
  const Eigen::RowVectorXd p = lp.array().exp();
  double s = 0;
  for (int c = 0; c < p.size(); ++c)
    if (c != true_class_) s = std::max(s, p(c));
  last_score_ = s;
  last_true_ = p(true_class_);
  return Eigen::Vector2d(s, 1.0 - s);
}

nlohmann::json LatentGame::RoundDetails(const std::vector<Eigen::VectorXd>&,
                                        const Eigen::VectorXd&) {
  nlohmann::json d = {{"attack_score", last_score_},
                      {"true_prob", last_true_},
                      {"success", last_score_ > last_true_},
                      {"linf_attacker", last_linf1_},
                      {"linf_defender", last_linf2_}};
  if (opt_.strength_action && opt_.defender_active) d["strength"] = last_strength_;
  return d;
}

}  // namespace advbo::defenses
