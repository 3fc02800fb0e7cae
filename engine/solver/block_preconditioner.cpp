// Block layout over the runs and the per-iteration factorization (block_preconditioner_hd.h).
// Each block is factorized by the shared CS_HD factorBlock, in parallel over the runs (blocks
// write disjoint rows of the inverse): the bits do not depend on the thread count.
#include "engine/solver/block_preconditioner.h"

#include <cstring>

namespace cs {

BlockPreconditionerView buildBlockPreconditioner(const RowSystemView& s, BlockPreconditionerScratch& b) {
    const int n = s.rowCount;
    if (b.blockFirst.size() < size_t(n)) {
        b.blockFirst.resize(n);
        b.blockSize.resize(n);
    }
    if (b.inverse.size() < size_t(n) * kMaxBlockRows) b.inverse.resize(size_t(n) * kMaxBlockRows);
    const int* runStart = s.runStart;
    int runs = s.runCount;
    if (!(runs > 0 && runStart)) {
        b.runStart.resize(n + 1);
        runs = findRuns(n, s.bodyA, s.bodyB, b.runStart.data(), s.bodyC, s.bodyD);
        runStart = b.runStart.data();
    }
    int* blockFirst = b.blockFirst.data();
    int* blockSize = b.blockSize.data();
    Real* inverse = b.inverse.data();
#pragma omp parallel for schedule(static) if (n > 2048)
    for (int k = 0; k < runs; ++k) {
        const int begin = runStart[k], end = runStart[k + 1];
        for (int i = begin; i < end; ++i) blockOfRow(begin, end, i, blockFirst[i], blockSize[i]);
        for (int i = begin; i < end; i += blockSize[i]) factorBlock(s, i, blockSize[i], inverse);
    }
    return BlockPreconditionerView{blockFirst, blockSize, inverse};
}

const char* preconditionerName(Preconditioner p) { return p == Preconditioner::Block ? "block" : "diagonal"; }

bool parsePreconditioner(const char* name, Preconditioner& out) {
    if (!name) return false;
    if (std::strcmp(name, "diagonal") == 0) out = Preconditioner::Diagonal;
    else if (std::strcmp(name, "block") == 0) out = Preconditioner::Block;
    else return false;
    return true;
}

}  // namespace cs
