// Hand-made deformations of deformable bodies' rest shapes, for reviewing the drawing (the
// strain colours, the smooth surface) and for tests, without the solver: `sandbox gui
// --fem-deform stretch:1.5` sets State::femPos to a stretched copy of the rest shape.
//
// Each body is deformed about the centre of its rest bounding box, along its longest axis u (x,
// y or z of the world, whichever the rest shape is longest in) and the world's up axis z (or y
// when u is z); s = (x - c) . u, h = (x - c) . up, L the body's extent along u:
//   stretch:a   x' = c + a s u + a^(-1/4) (x - c - s u): J = a^(1/2), the same in every tet
//   squeeze:a   the same along the up axis (a < 1 squeezes)
//   bend:k      s, h onto an arc of curvature k / L from the -u end (which stays put), s' = s + L/2:
//               x' = c - L/2 u + (R - h) sin(s' / R) u + (R - (R - h) cos(s' / R)) up with
//               R = L / k; fibres at height h change length by
//               the factor 1 - h k / L (J - 1 = -h k / L: shortened above, stretched below)
//   twist:t     the cross-section at s turned by t s / L about u (J = 1, shear grows with the
//               distance from the axis)
#pragma once

#include <string>
#include <vector>

#include "engine/model.h"

namespace cs {

// Parses "kind:amount" and writes the deformed node positions of every FEM body into femPos
// (resized to the model's nodes). False with a one-line *error on a bad spec.
bool deformFemBodies(const Model& model, const std::string& spec, std::vector<Vec3>& femPos, std::string* error);

}  // namespace cs
