// The CPU side of the block-Jacobi preconditioner (block_preconditioner_hd.h): the blocks' row
// layout from the runs of a RowSystemView, and the per-iteration factorization. The linear
// solvers (linear_solvers.cpp) apply it through applyBlockRow, as the pipeline does
// (engine/exec/pipeline_solve.h).
#pragma once

#include <vector>

#include "engine/solver/block_preconditioner_hd.h"

namespace cs {

struct BlockPreconditionerScratch {
    std::vector<int> runStart, blockFirst, blockSize;
    std::vector<Real> inverse;   // (rows x kMaxBlockRows)
};

// Lays the blocks out over the system's runs (findRuns when it has none) and factorizes every
// block with the system's current compliance. Returns the view the solvers apply.
BlockPreconditionerView buildBlockPreconditioner(const RowSystemView& system, BlockPreconditionerScratch& scratch);

const char* preconditionerName(Preconditioner p);            // "diagonal", "block"
bool parsePreconditioner(const char* name, Preconditioner& out);

}  // namespace cs
