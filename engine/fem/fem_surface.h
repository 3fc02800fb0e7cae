// What the renderer draws of deformable bodies, built without OpenGL so that the tests can check
// it: the deformed boundary surface with smooth normals, coloured by the body's colour or by a
// strain field of the tet under each boundary triangle (strain_fields_hd.h).
//
// Smooth normals: each node's normal is the sum of its boundary triangles' cross products
// (e1 x e2, twice the area times the unit normal), so larger triangles weigh more, normalized.
// The field is constant per tet (linear tets: constant strain), so each triangle carries its
// tet's colour: the vertices are not shared between triangles (three per triangle), only their
// normals are smooth.
//
// Colour range: fixed (lo, hi) or automatic over every tet of every FEM body of the world. The
// strain fields are centred on their rest value (J - 1 = 0, stretch 1) and drawn with a
// diverging map (blue below, white at rest, red above), symmetric about the rest value when
// automatic; von Mises stress is >= 0 and drawn with a sequential map from 0. The automatic
// range spans the 2nd to 98th percentiles of the tets' values, not their extremes: a few hot
// tets (under a node contact, at a pinned node) are many times the rest, and a range to their
// maximum drew a squeezed ball in the bottom colour all over. Values past the range take its end
// colours. Inverted tets (det F <= 0, where the stresses mean nothing) are drawn magenta and left
// out of the automatic range.
#pragma once

#include <vector>

#include "engine/fem/strain_fields_hd.h"
#include "engine/model.h"
#include "engine/state.h"

namespace cs {

// The automatic range's percentiles of the tets' values.
constexpr double kFemRangeLow = 0.02, kFemRangeHigh = 0.98;

struct FemSurfaceStyle {
    bool colorByField = false;
    FemField field = FemField::VolumetricStrain;
    bool autoRange = true;
    float lo = -0.1f, hi = 0.1f;   // fixed range, in the field's units
};

struct FemSurfaceVertex {
    float pos[3];
    float normal[3];
    float color[4];
};

// The range the colours were mapped over, and the values seen.
struct FemFieldRange {
    float lo = 0, hi = 1;
    float seenMin = 0, seenMax = 0;   // the extremes of the values (not inverted tets)
    bool diverging = true;
    int inverted = 0;              // tets with det F <= 0 (drawn magenta)
};

constexpr Color3 kFemInvertedColor{1.f, 0.f, 1.f};

// The tet each boundary triangle (Model::femTris) is a face of.
std::vector<int> femBoundaryTriangleTets(const Model& model);

// One value per tet (Model::femTets) of the field at the state's node positions.
std::vector<Real> femTetFieldValues(const Model& model, const std::vector<Vec3>& femPos, FemField field);

// The field's colour at t in [0, 1] of the range (clamped).
Color3 femFieldColor(float t, bool diverging);

// Area-weighted node normals of the boundary (Model::femTris) at the given positions; nodes off
// the boundary get zero.
std::vector<Vec3> femBoundaryNormals(const Model& model, const std::vector<Vec3>& femPos);

// Fills `out` with three vertices per boundary triangle of every FEM body; `triTets` from
// femBoundaryTriangleTets (needed only when colouring by a field). Returns the range used.
FemFieldRange buildFemSurface(const Model& model, const State& state, const FemSurfaceStyle& style,
                              const std::vector<int>& triTets, std::vector<FemSurfaceVertex>& out);

}  // namespace cs
