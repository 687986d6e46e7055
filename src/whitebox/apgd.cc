#include "whitebox/apgd.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>

#include "bo/random.h"
#include "oracle/oracle.h"
#include "whitebox/fab.h"
#include "whitebox/model.h"

namespace advbo::whitebox {
namespace {

using torch::indexing::Slice;

// The loss APGD maximises, per image [n]: cross-entropy (APGD-CE) or, with targets
// (t >= 0), the targeted DLR loss of Sec. 3.2, -(z_y - z_t) / (z_pi1 - (z_pi3 + z_pi4) / 2).
torch::Tensor Loss(const torch::Tensor& z, const torch::Tensor& y, const torch::Tensor& t) {
  if (!t.defined()) return torch::logsumexp(z, 1) - z.gather(1, y.unsqueeze(1)).squeeze(1);
  const torch::Tensor sorted = std::get<0>(z.sort(1, /*descending=*/true));
  const torch::Tensor zy = z.gather(1, y.unsqueeze(1)).squeeze(1);
  const torch::Tensor zt = z.gather(1, t.unsqueeze(1)).squeeze(1);
  const torch::Tensor den =
      sorted.select(1, 0) - 0.5 * (sorted.select(1, 2) + sorted.select(1, 3)) + 1e-12;
  return -(zy - zt) / den;
}

class Runner {
 public:
  Runner(Model* model, double eps, const ApgdOptions& o) : model_(model), eps_(eps), o_(o) {
    checkpoints_ = ApgdCheckpoints(o.iterations);
  }

  // Loss, its gradient and the log-scores at x.
  void Evaluate(const Batch& b, const torch::Tensor& x, torch::Tensor* f, torch::Tensor* g,
                torch::Tensor* z) {
    torch::AutoGradMode grad_on(true);
    torch::Tensor xv = x.detach().requires_grad_(true);
    torch::Tensor scores = model_->Scores(xv);
    torch::Tensor loss = Loss(scores, b.y, b.t);
    *g = torch::autograd::grad({loss.sum()}, {xv})[0];
    *f = loss.detach();
    *z = scores.detach();
  }

  torch::Tensor Project(const Batch& b, const torch::Tensor& x) const {
    return ProjectToBall(b, x);
  }

  // Records the checked image of x (x, or on the grid its rounding; z = log-scores at x).
  void Check(const Batch& b, const torch::Tensor& x, const torch::Tensor& z, Findings* f) {
    if (!o_.grid) return f->Record(b, x, z);
    torch::NoGradGuard ng;
    const torch::Tensor xc = Checked(b, x, true);
    f->Record(b, xc, model_->Scores(xc));
  }

  // One APGD run (Algorithm 1) from a random start in the ball; fills the success fields.
  void Run(const Batch& b, const torch::Tensor& start, Findings* found) {
    const int64_t n = b.x0.size(0);
    torch::Tensor x = start, f, g, z;
    Evaluate(b, x, &f, &g, &z);
    found->zero_gradient = g.flatten(1).abs().amax(1) == 0;
    Check(b, x, z, found);
    torch::Tensor eta = torch::full({n}, 2.0 * eps_, torch::kFloat32);
    torch::Tensor f_max = f.clone(), x_max = x.clone(), g_max = g.clone();
    torch::Tensor eta_check = eta.clone(), f_max_check = f_max.clone();
    torch::Tensor increases = torch::zeros({n}, torch::kFloat32);
    torch::Tensor f_last = f.clone();
    torch::Tensor x_prev = x;
    auto e4 = [](const torch::Tensor& v) { return v.view({-1, 1, 1, 1}); };
    // x^(1) = P(x^(0) + eta sign(grad)): the first step has no momentum.
    torch::Tensor x_next = Project(b, x + e4(eta) * g.sign());
    size_t next_check = 1;  // checkpoints_[0] = 0
    for (int k = 1; k < o_.iterations; ++k) {
      x_prev = x;
      x = x_next;
      Evaluate(b, x, &f, &g, &z);
      Check(b, x, z, found);
      increases += (f > f_last).to(torch::kFloat32);
      f_last = f;
      const torch::Tensor better = f > f_max;
      f_max = torch::where(better, f, f_max);
      x_max = torch::where(e4(better), x, x_max);
      g_max = torch::where(e4(better), g, g_max);
      if (next_check < checkpoints_.size() && k == checkpoints_[next_check]) {
        const double height = checkpoints_[next_check] - checkpoints_[next_check - 1];
        const torch::Tensor cond1 = increases < o_.rho * height;
        const torch::Tensor cond2 = (eta == eta_check).logical_and(f_max == f_max_check);
        const torch::Tensor reduce = cond1.logical_or(cond2);
        eta_check = eta.clone();
        f_max_check = f_max.clone();
        eta = torch::where(reduce, eta * 0.5f, eta);
        // Restart from the best point (with its gradient; no momentum across the restart).
        x = torch::where(e4(reduce), x_max, x);
        g = torch::where(e4(reduce), g_max, g);
        x_prev = torch::where(e4(reduce), x_max, x_prev);
        f_last = torch::where(reduce, f_max, f_last);
        increases.zero_();
        ++next_check;
      }
      const torch::Tensor zstep = Project(b, x + e4(eta) * g.sign());
      x_next = Project(b, x + o_.alpha * (zstep - x) + (1.0 - o_.alpha) * (x - x_prev));
    }
  }

 private:
  Model* model_;
  double eps_;
  ApgdOptions o_;
  std::vector<int> checkpoints_;
};

}  // namespace

void ApgdOptions::Validate() const {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("APGD reference: " + what);
  };
  need(iterations >= 1, "iterations must be >= 1");
  need(restarts >= 0, "restarts must be >= 0");
  need(target_classes >= 0, "target_classes must be >= 0");
  need(target_restarts >= 1, "target_restarts must be >= 1");
  need(rho > 0 && rho <= 1, "rho must be in (0, 1]");
  need(alpha > 0 && alpha <= 1, "alpha must be in (0, 1]");
  need(fab_target_classes >= 0, "fab_target_classes must be >= 0");
  need(fab_iterations >= 1, "fab_iterations must be >= 1");
  need(fab_restarts >= 1, "fab_restarts must be >= 1");
  need(fab_alpha_max >= 0 && fab_alpha_max < 1, "fab_alpha_max must be in [0, 1)");
  need(fab_eta >= 1, "fab_eta must be >= 1");
  need(fab_beta > 0 && fab_beta <= 1, "fab_beta must be in (0, 1]");
  need(restarts + target_classes + fab_target_classes > 0, "no run asked for");
  need(batch >= 1, "batch must be >= 1");
  need(threads >= 0, "threads must be >= 0");
}

std::vector<int> ApgdCheckpoints(int iterations) {
  std::vector<int> w = {0};
  double p_prev = 0, p = 0.22;
  while (p <= 1.0) {
    const int wj = static_cast<int>(std::ceil(p * iterations - 1e-9));
    if (wj > w.back() && wj <= iterations) w.push_back(wj);
    const double next = p + std::max(p - p_prev - 0.03, 0.06);
    p_prev = p;
    p = next;
  }
  return w;
}

namespace {

// The targets of every image: the top max(target_classes, fab_target_classes) classes other
// than its label by the clean image's scores. Checks the class count (>= 4 for the targeted
// DLR loss) and labels.
std::vector<std::vector<int>> TopTargets(Model& model, const torch::Tensor& all,
                                         const std::vector<int>& labels, const ApgdOptions& o) {
  const size_t n = labels.size();
  std::vector<std::vector<int>> targets(n);
  const int wanted = std::max(o.target_classes, o.fab_target_classes);
  int classes = 0;
  for (size_t s = 0; s < n; s += o.batch) {
    const int64_t m = std::min<int64_t>(o.batch, n - s);
    const torch::Tensor z = model.Scores(all.index({Slice(s, s + m)}));
    classes = static_cast<int>(z.size(1));
    const torch::Tensor order = std::get<1>(z.sort(1, /*descending=*/true));
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < z.size(1); ++c) {
        const int cls = order[r][c].item<int>();
        if (cls != labels[s + r] && static_cast<int>(targets[s + r].size()) < wanted)
          targets[s + r].push_back(cls);
      }
  }
  if (o.target_classes > 0 && classes < 4)
    throw std::invalid_argument("APGD reference: the targeted DLR loss needs >= 4 classes, " +
                                model.path() + " has " + std::to_string(classes));
  for (int lab : labels)
    if (lab < 0 || lab >= classes)
      throw std::invalid_argument("APGD reference: label " + std::to_string(lab) +
                                  " outside the model's classes");
  return targets;
}

// One run's kind: APGD-CE (target_rank -1), APGD-T or (fab) FAB-T on the image's
// target_rank-th target, and which restart.
struct RunSpec {
  int target_rank;
  int restart;
  bool fab = false;
  std::string Name() const { return fab ? "fab-t" : target_rank < 0 ? "apgd-ce" : "apgd-t"; }
  bool Touches(const std::vector<int>& targets) const {
    return target_rank < 0 || target_rank < static_cast<int>(targets.size());
  }
};

// Every image's box, [n, C, H, W] each: the float ball of radius `radius` (the iterates'), and
// with `grid` the 8-bit ball of radius eps as grid indices k (the checked images'), both
// oracle::Ball's, so the reference's ball is the black-box attacks' one.
struct Boxes {
  torch::Tensor lo, hi, grid_lo, grid_hi;
};

Boxes BallBoxes(const torch::Tensor& all, double radius, double eps, bool grid) {
  const int64_t n = all.size(0);
  const size_t d = static_cast<size_t>(all[0].numel());
  Boxes b{torch::empty_like(all), torch::empty_like(all), {}, {}};
  if (grid) b.grid_lo = torch::empty_like(all), b.grid_hi = torch::empty_like(all);
  const float* x0 = all.data_ptr<float>();
  for (int64_t r = 0; r < n; ++r) {
    const auto ball = oracle::Ball::Make({oracle::Norm::kLinf, radius}, x0 + r * d, d);
    std::copy_n(ball->lower().data(), d, b.lo.data_ptr<float>() + r * d);
    std::copy_n(ball->upper().data(), d, b.hi.data_ptr<float>() + r * d);
    if (!grid) continue;
    const auto grid_ball =
        oracle::Ball::Make({oracle::Norm::kLinf, eps, oracle::PixelSpace::k8bit}, x0 + r * d, d);
    for (size_t p = 0; p < d; ++p) {
      b.grid_lo.data_ptr<float>()[r * d + p] = std::round(grid_ball->lower()[p] * 255.0f);
      b.grid_hi.data_ptr<float>()[r * d + p] = std::round(grid_ball->upper()[p] * 255.0f);
    }
  }
  return b;
}

// The batch of images `rows` for run `rs`: clean images, labels, targets, the ball.
Batch MakeBatch(const torch::Tensor& all, const Boxes& boxes, std::vector<size_t> rows,
                const std::vector<int>& labels, const std::vector<std::vector<int>>& targets,
                const RunSpec& rs, bool grid) {
  Batch b;
  b.rows = std::move(rows);
  std::vector<int64_t> idx(b.rows.begin(), b.rows.end()), ys, ts;
  for (size_t r : b.rows) {
    ys.push_back(labels[r]);
    if (rs.target_rank >= 0) ts.push_back(targets[r][rs.target_rank]);
  }
  const torch::Tensor at = torch::tensor(idx);
  b.x0 = all.index_select(0, at);
  b.y = torch::tensor(ys);
  if (rs.target_rank >= 0) b.t = torch::tensor(ts);
  b.lo = boxes.lo.index_select(0, at);
  b.hi = boxes.hi.index_select(0, at);
  if (grid) {
    b.grid_lo = boxes.grid_lo.index_select(0, at);
    b.grid_hi = boxes.grid_hi.index_select(0, at);
  }
  return b;
}

// Random start: uniform in the ball, image k's stream seeded by (seed, its index, run).
torch::Tensor RandomStart(const Runner& runner, const Batch& b, const std::vector<int>& indices,
                          uint64_t seed, size_t run_id, double radius) {
  const int64_t m = b.x0.size(0);
  const size_t d = static_cast<size_t>(b.x0[0].numel());
  std::vector<float> noise(static_cast<size_t>(m) * d);
  for (int64_t r = 0; r < m; ++r) {
    bo::Rng rng(bo::DeriveSeed(bo::DeriveSeed(seed, indices[b.rows[r]]), run_id));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (size_t p = 0; p < d; ++p) noise[r * d + p] = u(rng);
  }
  const torch::Tensor u = torch::from_blob(noise.data(), b.x0.sizes(), torch::kFloat32);
  return runner.Project(b, b.x0 + static_cast<float>(radius) * u);
}

// Stores break `a` (contiguous [C, H, W]) of batch row r and its L_inf distance, and where it
// lies in the ball: the fraction of pixels at a face of the
// ball (|delta| = radius, or clipped at 0 / 1), and whether the nearest vertex (every moved
// pixel pushed to +-radius) is adversarial too -- what an attack that searches only vertices
// (Square, Parsimonious, SignHunter) can reach.
void DescribeBreak(Model& model, const Batch& b, int64_t r, const torch::Tensor& a, double radius,
                   bool grid, ApgdImageResult* res) {
  res->adversarial.assign(a.data_ptr<float>(), a.data_ptr<float>() + a.numel());
  const torch::Tensor delta = a - b.x0[r];
  res->linf = delta.abs().max().item<float>();
  // At a face: at an end of the ball's box (which holds [0, 1]); on the grid, of its grid box.
  torch::Tensor at_face;
  if (grid) {
    const torch::Tensor k = torch::round(a * 255.0f);
    at_face = (k <= b.grid_lo[r]).logical_or(k >= b.grid_hi[r]);
  } else {
    at_face = (a <= b.lo[r] + 1e-6f).logical_or(a >= b.hi[r] - 1e-6f);
  }
  res->saturated_fraction = at_face.to(torch::kFloat32).mean().item<float>();
  torch::Tensor vertex =
      torch::max(torch::min(b.x0[r] + static_cast<float>(radius) * delta.sign(), b.hi[r]), b.lo[r]);
  if (grid)
    vertex =
        torch::max(torch::min(torch::round(vertex * 255.0f), b.grid_hi[r]), b.grid_lo[r]) / 255.0f;
  const torch::Tensor zv = model.Scores(vertex.unsqueeze(0));
  res->vertex_adversarial = Margin(zv, b.y.index({Slice(r, r + 1)})).item<float>() < 0;
}

// AutoAttack's order: APGD-CE restarts, then each APGD-T target's restarts, then FAB-T's.
std::vector<RunSpec> RunOrder(const ApgdOptions& o) {
  std::vector<RunSpec> runs;
  for (int r = 0; r < o.restarts; ++r) runs.push_back({-1, r});
  for (int k = 0; k < o.target_classes; ++k)
    for (int r = 0; r < o.target_restarts; ++r) runs.push_back({k, r});
  for (int k = 0; k < o.fab_target_classes; ++k)
    for (int r = 0; r < o.fab_restarts; ++r) runs.push_back({k, r, true});
  return runs;
}

// Adds run `rs`'s findings on batch `b` to the images' results: the steps spent, the first
// run's zero-gradient flag (`first`), the lowest margin, and each break with its description.
void StoreFindings(Model& model, const Batch& b, const Findings& f, const RunSpec& rs, bool first,
                   long steps, const std::vector<std::vector<int>>& targets, double radius,
                   bool grid, std::vector<ApgdImageResult>* out) {
  for (int64_t r = 0; r < static_cast<int64_t>(b.rows.size()); ++r) {
    ApgdImageResult& res = (*out)[b.rows[r]];
    res.gradient_steps += steps;
    if (first) res.zero_gradient = f.zero_gradient[r].item<bool>();
    res.margin = std::min(res.margin, static_cast<double>(f.low_margin[r].item<float>()));
    if (!f.found[r].item<bool>()) continue;
    res.robust = false;
    res.broken_by = rs.Name();
    res.target = rs.target_rank < 0 ? -1 : targets[b.rows[r]][rs.target_rank];
    res.adversarial_class = static_cast<int>(f.adv_class[r].item<int64_t>());
    res.margin = f.adv_margin[r].item<float>();
    DescribeBreak(model, b, r, f.adv[r].contiguous(), radius, grid, &res);
  }
}

}  // namespace

std::vector<ApgdImageResult> RunApgdReference(
    const std::string& model_path, const std::optional<oracle::Normalization>& normalize,
    bool outputs_logits, const std::vector<float>& images, const std::vector<int>& labels,
    const std::vector<int>& image_indices, int channels, int height, int width, double eps,
    const ApgdOptions& options, const ApgdProgress& progress,
    std::map<std::string, double>* stage_seconds) {
  options.Validate();
  const size_t n = labels.size(), d = static_cast<size_t>(channels) * height * width;
  if (channels <= 0 || height <= 0 || width <= 0 || images.size() != n * d ||
      image_indices.size() != n)
    throw std::invalid_argument("APGD reference: images, labels and indices disagree in size");
  if (!(eps > 0) || !std::isfinite(eps))
    throw std::invalid_argument("APGD reference: eps must be > 0");
  const double radius = options.grid ? oracle::GridRadius(eps) : eps;
  if (!(radius > 0))
    throw std::invalid_argument("APGD reference: eps is below one 8-bit step (1/255)");
  if (options.threads > 0) at::set_num_threads(options.threads);
  torch::NoGradGuard outer_no_grad;  // re-enabled inside Evaluate only
  Model model(model_path, normalize, outputs_logits, channels);
  Runner runner(&model, radius, options);
  const FabSettings fab{options.fab_iterations, options.fab_alpha_max, options.fab_eta,
                        options.fab_beta};
  std::vector<ApgdImageResult> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i].image_index = image_indices[i], out[i].label = labels[i],
    out[i].margin = std::numeric_limits<double>::infinity();
  const torch::Tensor all =
      torch::from_blob(const_cast<float*>(images.data()),
                       {static_cast<int64_t>(n), channels, height, width}, torch::kFloat32)
          .clone();
  const std::vector<std::vector<int>> targets = TopTargets(model, all, labels, options);
  const std::vector<RunSpec> runs = RunOrder(options);
  const Boxes boxes = BallBoxes(all, radius, eps, options.grid);
  for (size_t run_id = 0; run_id < runs.size(); ++run_id) {
    const RunSpec& rs = runs[run_id];
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<size_t> alive;
    for (size_t i = 0; i < n; ++i)
      if (out[i].robust && rs.Touches(targets[i])) alive.push_back(i);
    const std::string status = rs.target_rank < 0
                                   ? "apgd-ce run " + std::to_string(rs.restart + 1)
                                   : rs.Name() + " target " + std::to_string(rs.target_rank + 1);
    for (size_t s = 0; s < alive.size(); s += options.batch) {
      const Batch b =
          MakeBatch(all, boxes,
                    {alive.begin() + s, alive.begin() + std::min(alive.size(), s + options.batch)},
                    labels, targets, rs, options.grid);
      Findings f(b);
      long steps = options.iterations;
      if (rs.fab) {
        // FAB-T's first run starts at the clean image; later ones uniformly in the ball of
        // half the radius (FAB, Sec. 3.3).
        const torch::Tensor start =
            rs.restart == 0
                ? b.x0
                : RandomStart(runner, b, image_indices, options.seed, run_id, 0.5 * radius);
        steps = RunFabTargeted(model, b, start, fab, options.grid, &f);
      } else {
        runner.Run(b, RandomStart(runner, b, image_indices, options.seed, run_id, radius), &f);
      }
      StoreFindings(model, b, f, rs, run_id == 0, steps, targets, radius, options.grid, &out);
    }
    if (stage_seconds)
      (*stage_seconds)[rs.Name()] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (progress) {
      // Images finished: broken ones, and all once the last run that can touch them ran.
      long done = 0, robust_left = 0;
      for (size_t i = 0; i < n; ++i) {
        bool more = false;
        for (size_t q = run_id + 1; q < runs.size() && !more; ++q)
          more = runs[q].Touches(targets[i]);
        done += !out[i].robust || !more;
        robust_left += out[i].robust;
      }
      progress(done, static_cast<long>(n),
               status + " finished, " + std::to_string(robust_left) + " still robust");
    }
  }
  for (auto& o : out)
    if (o.robust && !std::isfinite(o.margin)) o.margin = 0;
  return out;
}

}  // namespace advbo::whitebox
