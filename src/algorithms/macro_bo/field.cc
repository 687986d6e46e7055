#include "algorithms/macro_bo/field.h"

#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>

#include "bo/gp.h"
#include "bo/grid_sample.h"
#include "bo/random.h"

namespace advbo::algorithms {
namespace {

// Seed of the fixed generator that draws the road/corridor macro-action subsets (the domain
// must not change with the realisation seed).
constexpr uint64_t kDomainSeed = 0x4D4143524FULL;  // "MACRO"

// Adjacency of the cells of a rows x cols lattice for which open(r, c) holds, compacted to
// the open cells in row-major order. eight = 8-neighbourhood (else 4). Writes the
// (row, col) of every open cell.
std::vector<std::vector<int>> LatticeGraph(int rows, int cols,
                                           const std::function<bool(int, int)>& open, bool eight,
                                           std::vector<std::pair<int, int>>* cells) {
  std::vector<int> id(rows * cols, -1);
  cells->clear();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      if (open(r, c)) {
        id[r * cols + c] = static_cast<int>(cells->size());
        cells->push_back({r, c});
      }
  std::vector<std::vector<int>> adj(cells->size());
  for (size_t i = 0; i < cells->size(); ++i) {
    const auto [r, c] = (*cells)[i];
    for (int dr = -1; dr <= 1; ++dr)
      for (int dc = -1; dc <= 1; ++dc) {
        if ((dr == 0 && dc == 0) || (!eight && dr != 0 && dc != 0)) continue;
        const int rr = r + dr, cc = c + dc;
        if (rr < 0 || rr >= rows || cc < 0 || cc >= cols || id[rr * cols + cc] < 0) continue;
        adj[i].push_back(id[rr * cols + cc]);
      }
  }
  return adj;
}

MacroField Plankton(uint64_t seed) {
  MacroField m;
  const int n = 50;
  const double cell = 0.1;  // km
  m.domain.name = "plankton";
  m.domain.kappa = 4;
  m.domain.locations.resize(n * n, 2);
  Eigen::VectorXd axis(n);
  for (int i = 0; i < n; ++i) axis(i) = (i + 0.5) * cell;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) m.domain.locations.row(r * n + c) << axis(c), axis(r);
  m.domain.actions = GridDives(n, n, m.domain.kappa);
  m.prior = {0.0, 0.5, 0.5, 1.0, 1e-5};
  bo::Rng rng(seed);
  // F(x index, y index): axis1 = east-west (columns), axis2 = north-south (rows).
  const Eigen::MatrixXd f = bo::SampleGpOnGrid(axis, axis, 0.5, 0.5, 1.0, rng);
  m.f.resize(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) m.f(r * n + c) = m.prior.mean + f(c, r);
  m.start = (n / 2) * n + n / 2;
  m.budget = 20;
  return m;
}

MacroField Road(uint64_t seed, int per_location) {
  MacroField m;
  const int rows = 50, cols = 100;
  const double dx = 29.4 / cols, dy = 11.9 / rows;  // km
  auto open = [](int r, int c) {
    // Streets every 3rd row and 5th column, two two-cell-wide diagonal avenues.
    return r % 3 == 0 || c % 5 == 0 || c == 2 * r || c == 2 * r + 1 || c == 99 - 2 * r ||
           c == 98 - 2 * r;
  };
  std::vector<std::pair<int, int>> cells;
  const auto adj = LatticeGraph(rows, cols, open, /*eight=*/true, &cells);
  m.domain.name = "road";
  m.domain.kappa = 5;
  m.domain.locations.resize(static_cast<Eigen::Index>(cells.size()), 2);
  for (size_t i = 0; i < cells.size(); ++i)
    m.domain.locations.row(static_cast<Eigen::Index>(i)) << (cells[i].second + 0.5) * dx,
        (cells[i].first + 0.5) * dy;
  m.domain.actions = PathMacroActions(adj, m.domain.kappa, per_location, kDomainSeed);
  m.prior = {1.5673, 0.1689, 0.1275, 0.7486, 0.0111};
  bo::Rng rng(seed);
  Eigen::VectorXd ax(cols), ay(rows);
  for (int c = 0; c < cols; ++c) ax(c) = (c + 0.5) * dx;
  for (int r = 0; r < rows; ++r) ay(r) = (r + 0.5) * dy;
  const Eigen::MatrixXd f = bo::SampleGpOnGrid(ax, ay, m.prior.lengthscale1, m.prior.lengthscale2,
                                               m.prior.signal_variance, rng);
  m.f.resize(static_cast<Eigen::Index>(cells.size()));
  for (size_t i = 0; i < cells.size(); ++i)
    m.f(static_cast<Eigen::Index>(i)) = m.prior.mean + f(cells[i].second, cells[i].first);
  std::uniform_int_distribution<int> pick(0, static_cast<int>(cells.size()) - 1);
  do m.start = pick(rng);
  while (m.domain.actions[m.start].empty());
  m.budget = 20;
  return m;
}

MacroField Corridor(uint64_t seed, int per_location) {
  MacroField m;
  const int rows = 20, cols = 26;
  const double step = 1.6;  // m
  auto open = [](int r, int c) {
    return r == 0 || r == 19 || c == 0 || c == 25 || r == 10 || c == 13 || (c == 6 && r <= 10);
  };
  std::vector<std::pair<int, int>> cells;
  const auto adj = LatticeGraph(rows, cols, open, /*eight=*/false, &cells);
  const Eigen::Index n = static_cast<Eigen::Index>(cells.size());
  m.domain.name = "corridor";
  m.domain.kappa = 5;
  m.domain.locations.resize(n, 2);
  for (Eigen::Index i = 0; i < n; ++i)
    m.domain.locations.row(i) << cells[i].second * step, cells[i].first * step;
  m.domain.actions = PathMacroActions(adj, m.domain.kappa, per_location, kDomainSeed);
  m.prior = {17.8513, 4.0058, 11.3811, 0.5964, 0.0597};
  // Exact draw at the n locations: f = mu + L z, L the jittered Cholesky factor of K.
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      k(i, j) = FieldKernel(m.prior, m.domain.locations, static_cast<int>(i), static_cast<int>(j));
  double jitter = 0;
  const Eigen::MatrixXd l = bo::CholeskyWithJitter(k, &jitter);
  bo::Rng rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd z(n);
  for (Eigen::Index i = 0; i < n; ++i) z(i) = normal(rng);
  m.f = (l * z).array() + m.prior.mean;
  std::uniform_int_distribution<int> pick(0, static_cast<int>(n) - 1);
  do m.start = pick(rng);
  while (m.domain.actions[m.start].empty());
  m.budget = 20;
  return m;
}

}  // namespace

double FieldKernel(const FieldPrior& prior, const Eigen::MatrixXd& x, int a, int b) {
  const double d1 = (x(a, 0) - x(b, 0)) / prior.lengthscale1;
  const double d2 = (x(a, 1) - x(b, 1)) / prior.lengthscale2;
  return prior.signal_variance * std::exp(-0.5 * (d1 * d1 + d2 * d2));
}

std::vector<std::string> FieldNames() { return {"plankton", "road", "corridor"}; }

MacroField MakeField(const std::string& name, uint64_t seed, int actions_per_location) {
  if (actions_per_location < 1)
    throw std::invalid_argument("macro-actions per location must be >= 1, got " +
                                std::to_string(actions_per_location));
  if (name == "plankton") return Plankton(seed);
  if (name == "road") return Road(seed, actions_per_location);
  if (name == "corridor") return Corridor(seed, actions_per_location);
  throw std::invalid_argument("unknown field '" + name + "' (fields: plankton, road, corridor)");
}

std::vector<std::vector<std::vector<int>>> GridDives(int rows, int cols, int kappa) {
  if (rows < 1 || cols < 1 || kappa < 1)
    throw std::invalid_argument("GridDives: rows, cols and kappa must be >= 1");
  const int dr[4] = {-1, 0, 1, 0}, dc[4] = {0, 1, 0, -1};
  std::vector<std::vector<std::vector<int>>> actions(rows * cols);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      for (int d = 0; d < 4; ++d) {
        const int er = r + kappa * dr[d], ec = c + kappa * dc[d];
        if (er < 0 || er >= rows || ec < 0 || ec >= cols) continue;
        std::vector<int> a(kappa);
        for (int k = 1; k <= kappa; ++k) a[k - 1] = (r + k * dr[d]) * cols + (c + k * dc[d]);
        actions[r * cols + c].push_back(std::move(a));
      }
  return actions;
}

std::vector<std::vector<std::vector<int>>> PathMacroActions(
    const std::vector<std::vector<int>>& adjacency, int kappa, int max_per_location,
    uint64_t seed) {
  if (kappa < 1 || max_per_location < 1)
    throw std::invalid_argument("PathMacroActions: kappa and max_per_location must be >= 1");
  const int m = static_cast<int>(adjacency.size());
  std::vector<std::vector<std::vector<int>>> actions(m);
  std::vector<int> path;
  std::vector<char> on_path(m, 0);
  for (int s = 0; s < m; ++s) {
    std::vector<std::vector<int>> all;
    std::function<void(int)> dfs = [&](int at) {
      if (static_cast<int>(path.size()) == kappa) {
        all.push_back(path);
        return;
      }
      for (int nb : adjacency[at]) {
        if (nb < 0 || nb >= m) throw std::invalid_argument("PathMacroActions: bad adjacency");
        if (on_path[nb]) continue;
        on_path[nb] = 1;
        path.push_back(nb);
        dfs(nb);
        path.pop_back();
        on_path[nb] = 0;
      }
    };
    on_path[s] = 1;
    dfs(s);
    on_path[s] = 0;
    if (static_cast<int>(all.size()) > max_per_location) {
      // Partial Fisher-Yates: the first max_per_location entries are a uniform subset.
      bo::Rng rng(bo::DeriveSeed(seed, static_cast<uint64_t>(s)));
      for (int i = 0; i < max_per_location; ++i) {
        std::uniform_int_distribution<size_t> pick(i, all.size() - 1);
        std::swap(all[i], all[pick(rng)]);
      }
      all.resize(max_per_location);
    }
    actions[s] = std::move(all);
  }
  return actions;
}

}  // namespace advbo::algorithms
