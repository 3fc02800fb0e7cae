// Each tet's SVD and potential at the end positions of the last step, for the next step's start.
//
// The energy guard (stepEnergy, energy_guard.h) takes each tet's potential V at the end positions
// x + h v+, which needs F's SVD there. The next step starts from those positions whenever nothing
// moved the nodes in between (the integration is x += h v+, the same expression), so its element
// rows (buildFemRows) and its start V read them here: one SVD per tet per step instead of three
// (the SVDs were 31 % of pneunet_finger's step with two; perf). A tet whose inputs differ in any
// bit (a rolled-back step, a moved node, a new pressure, an edited material or rest shape) is
// computed afresh, so every result is bitwise the same as without the cache.
#pragma once

#include <cstring>
#include <vector>

#include "engine/fem/fem_material_hd.h"

namespace cs {

struct FemTetCache {
    struct Tet {
        Vec3 x[4];
        TetRest rest;
        FemMaterial material;
        Real activation = 0;
        Real potential = 0;   // V at x (J)
        TetSvd svd;           // svd3 of F at x
        bool valid = false;
    };
    std::vector<Tet> tets;   // (tets)

    // The entry of tet t when it was computed at these positions and rest shape, else null.
    const Tet* at(int t, const Vec3 x[4], const TetRest& rest) const {
        if (t >= (int)tets.size() || !tets[t].valid) return nullptr;
        const Tet& c = tets[t];
        static_assert(sizeof(Vec3) == 3 * sizeof(Real) && sizeof(TetRest) == 10 * sizeof(Real));
        if (std::memcmp(c.x, x, sizeof(c.x)) != 0 || std::memcmp(&c.rest, &rest, sizeof(TetRest)) != 0) return nullptr;
        return &c;
    }
};

}  // namespace cs
