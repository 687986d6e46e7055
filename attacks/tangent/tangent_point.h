// The optimal tangent point of the Tangent Attack (Ma, Guo, Chen, Yong & Wang, "Finding Optimal
// Tangent Points for Reducing Distortions of Hard-label Attacks", NeurIPS 2021): TA's virtual
// hemisphere and G-TA's semi-ellipsoid of revolution, both centred at the boundary point x_b and
// standing on the adversarial side of the boundary's estimated tangent plane (unit normal u).
// The point k the attack jumps to is where the line from the clean image x0 touches that
// surface, on the side of x0 and above the plane (the paper's argmax_k <k - x_b, u> subject to
// tangency): the subsequent binary search along x0 -> k then meets the tangent plane nearer to
// x0 than along any other line through the surface.
//
// Everything happens in the 2-D plane spanned by u and x0's component along the tangent plane.
// With coordinates (p, z) -- p along that tangential direction, z along u, origin x_b -- the
// surface is p^2 / S^2 + z^2 / L^2 = 1 (S the tangential radius, L the normal one; TA: S = L =
// R) and x0 sits at (P, Z), Z < 0 when x0 is on the clean side. A point (S cos phi, L sin phi)
// is a tangent point seen from x0 iff (P / S) cos phi + (Z / L) sin phi = 1, i.e. phi = psi +-
// arccos(1 / rho) with rho = |(P / S, Z / L)|, psi its angle; the "+" root is the one above the
// plane on x0's side (TA: phi = beta - alpha with cos beta = R / |x0 - x_b| and alpha x0's
// angle below the plane, the paper's gamma; Sec. 3.2-3.3).
#pragma once

#include <vector>

namespace advbo::attacks {

/// The tangent point k [D] of the semi-ellipsoid centred at `center` (x_b) [D] with radius
/// `normal_radius` (L > 0) along the unit normal `normal` [D] and `tangential_radius` (S > 0)
/// across it, seen from `x0` [D] (the Tangent Attack's Sec. 3; S = L is TA's hemisphere, S =
/// L / ratio G-TA's semi-ellipsoid). Pixels are not clipped here.
///
/// Cases the paper leaves open, handled here: when x0 lies inside the surface (rho <= 1) or
/// straight below x_b (no tangential component, so no plane), k is the top x_b + L u (HSJA's
/// step of length L); phi is kept in [0, pi], so a tangent point below the plane becomes the
/// rim point x_b + S t on x0's side. Throws std::invalid_argument on mismatched sizes or a
/// radius that is not positive and finite.
std::vector<double> TangentPoint(const std::vector<float>& x0, const std::vector<float>& center,
                                 const std::vector<double>& normal, double normal_radius,
                                 double tangential_radius);

}  // namespace advbo::attacks
