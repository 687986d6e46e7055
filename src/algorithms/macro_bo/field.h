// Spatial phenomena with macro-actions for epsilon-Macro-BO (Kharkovskii 2020 thesis, Ch. 4,
// Sec. 4.1 and the three studies of Sec. 4.4): a finite set of input locations, the macro-actions
// (sequences of kappa locations) available at each location, and one realisation of a GP field.
//
// The thesis' road (taxi pickups) and corridor (Intel Berkeley lab temperature) data are not
// available here, so those two are synthetic stand-ins: a road network / corridor layout built
// by a fixed generator and a GP draw with the thesis' fitted hyperparameters (Sec. 4.4.2-4.4.3).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

namespace advbo::algorithms {

/// GP prior of a field (Sec. 4.1): constant mean, SE kernel with one lengthscale per axis.
struct FieldPrior {
  double mean = 0.0;             ///< mu_s, prior mean of the output
  double lengthscale1 = 0.5;     ///< l_1 (east-west), units of the locations (> 0)
  double lengthscale2 = 0.5;     ///< l_2 (north-south) (> 0)
  double signal_variance = 1.0;  ///< sigma_y^2 (> 0)
  double noise_variance = 1e-5;  ///< sigma_n^2 (> 0)
};

/// The prior covariance k(x_a, x_b) = sigma_y^2 exp(-((dx/l_1)^2 + (dy/l_2)^2) / 2) between rows
/// a and b of locations [M, 2] (the non-isotropic SE kernel of Sec. 4.1). No range checks.
double FieldKernel(const FieldPrior& prior, const Eigen::MatrixXd& locations, int a, int b);

/// Locations and macro-actions. actions[s] lists the macro-actions available at location s
/// (A(s) in Sec. 4.1); each is kappa location indices visited in order, the last being where
/// the agent ends up. Every location reachable by a macro-action has its own list (maybe empty:
/// a dead end ends the episode early).
struct MacroDomain {
  /// Name of the domain (e.g. plankton).
  std::string name;
  Eigen::MatrixXd locations;                           ///< [M, 2] coordinates
  std::vector<std::vector<std::vector<int>>> actions;  ///< [M][A(s)][kappa]
  int kappa = 1;                                       ///< macro-action length
};

/// One realisation: domain, prior, latent values and the episode settings.
struct MacroField {
  /// Locations and macro-actions.
  MacroDomain domain;
  /// GP prior of the field.
  FieldPrior prior;
  Eigen::VectorXd f;  ///< [M] latent field values (prior mean included)
  int start = 0;      ///< starting location (its observation is the prior data d_0)
  int budget = 20;    ///< observations gathered after d_0 (a multiple of kappa)
};

/// Names accepted by MakeField: "plankton", "road", "corridor".
std::vector<std::string> FieldNames();

/// Builds realisation `seed` of a named field:
///  - plankton (Sec. 4.4.1): 50 x 50 grid over 5 km x 5 km (cell centres, km), mu_s = 0,
///    l = 0.5 km, sigma_y^2 = 1, sigma_n^2 = 1e-5, start at the centre cell (25, 25), kappa = 4
///    straight dives along the 4 cardinal directions, budget 20 (5 iterations);
///  - road (Sec. 4.4.2 stand-in): 100 x 50 grid over 29.4 km x 11.9 km; a fixed synthetic
///    road network (grid of streets plus two diagonal avenues) makes about half the cells
///    accessible, moves between 8-adjacent accessible cells; mu_s = 1.5673, l = (0.1689,
///    0.1275) km, sigma_y^2 = 0.7486, sigma_n^2 = 0.0111; macro-actions are simple paths of
///    kappa = 5 moves, `actions_per_location` of them drawn per location (fixed generator);
///    random accessible start; budget 20 (4 iterations);
///  - corridor (Sec. 4.4.3 stand-in): corridors of a 41 m x 32 m floor on a 1.6 m lattice
///    (outer ring, two cross corridors, one spur), 4-adjacent moves; mu_s = 17.8513,
///    l = (4.0058, 11.3811) m, sigma_y^2 = 0.5964, sigma_n^2 = 0.0597; kappa = 5, up to
///    `actions_per_location` macro-actions per location; random start; budget 20.
/// The domain is the same for every seed; the field (and road/corridor start) vary with it.
/// Throws std::invalid_argument for an unknown name or actions_per_location < 1.
MacroField MakeField(const std::string& name, uint64_t seed, int actions_per_location = 20);

/// Straight macro-actions of length kappa along the 4 cardinal directions on a rows x cols
/// grid (location index = row * cols + col); directions that leave the grid are absent.
/// Order: north (row - 1), east, south, west.
std::vector<std::vector<std::vector<int>>> GridDives(int rows, int cols, int kappa);

/// All simple paths of `kappa` moves from each location on a directed graph (adjacency lists
/// [M]); a path never revisits a location (its start included). If a location has more than
/// max_per_location of them, max_per_location are drawn without replacement (seed).
std::vector<std::vector<std::vector<int>>> PathMacroActions(
    const std::vector<std::vector<int>>& adjacency, int kappa, int max_per_location, uint64_t seed);

}  // namespace advbo::algorithms
