#include "whitebox/fab.h"

#include <torch/autograd.h>

namespace advbo::whitebox {

torch::Tensor ProjectLinfOntoHyperplaneInBox(const torch::Tensor& p, const torch::Tensor& w,
                                             const torch::Tensor& c) {
  const torch::Tensor s = c.sign().unsqueeze(1);  // which side the step goes
  const torch::Tensor dir = s * w.sign();         // [m, D] in {-1, 0, 1}
  const torch::Tensor a = w.abs();                // gain of <w, delta> per unit of step
  // Room to move in `dir` before leaving [0, 1]; none for a coordinate that does not move.
  const torch::Tensor room =
      torch::where(dir > 0, 1.0f - p, torch::where(dir < 0, p, torch::zeros_like(p)));
  const torch::Tensor need = c.abs().unsqueeze(1);  // [m, 1]
  // h(r) = sum_i a_i min(r, room_i), piecewise linear and non-decreasing in r; at the sorted
  // rooms u_(k): h(u_(k)) = sum_{j<k} a_(j) u_(j) + u_(k) sum_{j>=k} a_(j).
  const auto [u, order] = room.sort(1);
  const torch::Tensor au = a.gather(1, order);
  const torch::Tensor below = (au * u).cumsum(1) - au * u;         // sum_{j<k} a u
  const torch::Tensor above = a.sum(1, true) - au.cumsum(1) + au;  // sum_{j>=k} a
  const torch::Tensor h = below + u * above;
  const torch::Tensor reach = h >= need;
  const torch::Tensor feasible = reach.any(1, true);
  const torch::Tensor k = reach.to(torch::kInt).argmax(1, true);  // first breakpoint reaching
  const torch::Tensor r_reach = (need - below.gather(1, k)) / above.gather(1, k).clamp_min(1e-30f);
  const torch::Tensor r =
      torch::where(feasible, r_reach.clamp_min(0.0f), u.select(1, u.size(1) - 1).unsqueeze(1));
  return dir * torch::min(room, r);
}

long RunFabTargeted(Model& model, const Batch& b, const torch::Tensor& start, const FabSettings& s,
                    bool grid, Findings* findings) {
  const int64_t m = b.x0.size(0);
  const torch::Tensor x0 = b.x0.flatten(1);
  torch::Tensor x = start.flatten(1).clone();
  const auto shape = b.x0.sizes();
  const torch::Tensor rows = torch::arange(m);
  for (int i = 0; i < s.iterations; ++i) {
    // The linearised hyperplane of g = z_t - z_y at x: g(x) + <w, z - x> = 0.
    torch::Tensor g, w;
    {
      torch::AutoGradMode grad_on(true);
      torch::Tensor xv = x.detach().view(shape).requires_grad_(true);
      const torch::Tensor z = model.Scores(xv);
      const torch::Tensor diff =
          z.gather(1, b.t.unsqueeze(1)).squeeze(1) - z.gather(1, b.y.unsqueeze(1)).squeeze(1);
      w = torch::autograd::grad({diff.sum()}, {xv})[0].flatten(1);
      g = diff.detach();
    }
    if (i == 0) findings->zero_gradient = w.abs().amax(1) == 0;
    const torch::Tensor dx = ProjectLinfOntoHyperplaneInBox(x, w, -g);
    const torch::Tensor d0 = ProjectLinfOntoHyperplaneInBox(x0, w, -(g + (w * (x0 - x)).sum(1)));
    const torch::Tensor nx = dx.abs().amax(1), n0 = d0.abs().amax(1);
    const torch::Tensor alpha =
        torch::where(nx + n0 > 0, nx / (nx + n0).clamp_min(1e-30f), torch::zeros_like(nx))
            .clamp_max(static_cast<float>(s.alpha_max))
            .unsqueeze(1);
    const float eta = static_cast<float>(s.eta);
    const torch::Tensor next =
        ((1.0f - alpha) * (x + eta * dx) + alpha * (x0 + eta * d0)).clamp(0.0f, 1.0f);
    const torch::Tensor img = next.view(shape);
    const torch::Tensor adv = Margin(model.Scores(img), b.y) < 0;
    if (adv.any().item<bool>()) {
      // The break a user could save: inside the ball (and on its grid).
      const torch::Tensor at = rows.masked_select(adv);
      const torch::Tensor xc = Checked(b, ProjectToBall(b, img), grid);
      const torch::Tensor za = model.Scores(xc.index_select(0, at));
      const torch::Tensor zc = torch::zeros({m, za.size(1)}).index_copy_(0, at, za);
      findings->Record(b, xc, zc, adv, /*keep_closest=*/true);
    }
    // Backward step after a success: back towards the clean image.
    const float beta = static_cast<float>(s.beta);
    x = torch::where(adv.unsqueeze(1), (1.0f - beta) * x0 + beta * next, next);
  }
  return s.iterations;
}

}  // namespace advbo::whitebox
