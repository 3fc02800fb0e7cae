// The deformable bodies' part of World::step (CPU): nodes as bodies of the solve, element and
// attachment rows, node integration, energies. The per-element math is fem_rows_hd.h.
//
// Solver body index of FEM node n: model.bodyCount() + n (fem_rows_hd.h's index space).
#pragma once

#include <vector>

#include "engine/fem/fem_tet_cache.h"
#include "engine/model.h"
#include "engine/solver/constraint_rows.h"
#include "engine/solver/newton.h"
#include "engine/state.h"

namespace cs {

CS_HD int femNodeBodyIndex(int bodyCount, int node) { return bodyCount + node; }

// Appends the FEM nodes to the solve's bodies: inverse mass (0 when pinned), zero inverse inertia,
// u~ = {v + h g, 0} ([NSN] eq. 54 for particles), velocity sized.
void appendFemNodes(const Model& model, const State& state, Vec3 gravity, Real h, BodyVelocities& bodies);

// Rows of every tet (fem_rows_hd.h; kFemMaxRows each), then three per attachment; warm impulses
// from state.femWarm when `warm` and its size matches (each tet's by femTetWarmImpulses, the
// attachments' as they were). tetRotation receives each tet's polar rotation for storeFemWarm.
// cache (optional): the SVDs of the last step's end positions (fem_tet_cache.h). Returns the
// number of rows appended.
int buildFemRows(const Model& model, const State& state, Real h, bool warm, ConstraintRows& rows,
                 std::vector<Mat3>& tetRotation, const FemTetCache* cache = nullptr);

// After the solve: state.femWarm from the `count` FEM rows at `first` (buildFemRows' return),
// each tet's node impulses in its polar frame (femTetWarmStore, kFemWarmPerTet numbers), then the
// attachments' row impulses.
void storeFemWarm(const Model& model, const ConstraintRows& rows, int first, int count,
                  const std::vector<Mat3>& tetRotation, std::vector<Real>& warm);

// The fastest FEM node of a velocity list (m/s).
Real fastestFemNode(const std::vector<Vec3>& vel);

// Kinetic energy of the nodes (J) and the elastic energy of the elements (J, zero at rest).
Real femKineticEnergy(const Model& model, const State& state);
Real femElasticEnergy(const Model& model, const State& state);

// Per-tet fields (fem_rows_hd.h femStrainFields) at the current positions: (tets) each.
struct FemTetFields {
    std::vector<Real> volumetricStrain, vonMises, maxStretch;
};
void femTetFields(const Model& model, const State& state, FemTetFields& out);

}  // namespace cs
