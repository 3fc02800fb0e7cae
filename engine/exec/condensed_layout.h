// The host half of the condensed solve (condensed_solve.h): from each row's class and bodies, the
// soft and hard row lists, K's node numbering and pattern (CAMD, the touched nodes last), each
// soft run's value slots in K, and the per-body lists of the hard rows' W terms in G.
//
// This is the part whose sizes decide the shapes of the rest (the dense system's size, K's
// pattern), so it runs on the host from a copy of the rows' classes and bodies; everything
// numeric runs on the executor. K's pattern and numbering are kept while the structure's
// signature (the soft runs' bodies and the touched nodes) stays the same.
#pragma once

#include <vector>

namespace cs {

// Hard rows above which the step keeps the iterative solve: their dense factor costs m^3/3 flops
// per Newton iteration (600 rows: 72 Mflop, some 20 ms).
constexpr int kMaxDenseHardRows = 600;
// Node DOFs touched by hard rows above which the step keeps the iterative solve: K^-1 over them
// costs about 1.5 q^3 flops per step. fem_fold's self contact touches 530-560 and more, so its
// steps stay iterative (they converge since the self-contact rows were fixed, docs/fem_convergence.md
// section 5; before, with both limits at 1,500, every condensed step still ended at the Newton cap).
constexpr int kMaxTouchedDofs = 600;

struct CondensedLayout {
    // ---- inputs (host copies): condensed_rows_hd.h's classes and kinds ----
    std::vector<int> rowClass;   // (rows) CondensedRowClass
    std::vector<int> rowBody;    // (rows x 4) bodies A, B, C, D; -1 absent
    std::vector<int> bodyKind;   // (bodies) CondensedBodyKind

    // ---- K's structure: rebuilt when the signature changes ----
    std::vector<int> signature;         // bodyCount, four K bodies per soft run, the touched bodies
    std::vector<int> bodyNode;          // (bodies) K node or -1
    std::vector<int> nodeBody;          // (K nodes), in the elimination order
    std::vector<int> nodeColumnLength;  // (K nodes) entries in each of the node's three columns
    std::vector<int> diagSlot;          // (K nodes) value index of the diagonal block's (0, 0)
    std::vector<int> colStart, rowIndex;   // K's lower triangle by columns (sparse_pattern.h)
    std::vector<int> runSlot;    // (runs x 16) value index of block (c1, c2)'s entry (0, 0), or -1
    std::vector<int> runLength;  // (runs x 16) column length at that block (entry (r, c): slot + c len + r)
    bool patternChanged = false;   // this layout's pattern is new: analyse it again

    // ---- per step ----
    std::vector<int> soft, runStart;   // soft rows; runs of soft rows on the same bodies
    std::vector<int> hard, hardLinear; // hard rows; 1 where linear (kCondensedHardLinear)
    std::vector<int> linearIndex;      // hard indices of the linear ones
    std::vector<int> touchedDof;       // (K nodes) first column in K^-1's touched block, or -1
    std::vector<int> entryStart;       // (bodies + 1) into entries: the hard rows on non-K dynamic bodies
    std::vector<int> entries;          // (hard index, column) pairs, by body, in hard-row order
    int nodes = 0, touched = 0;        // K nodes, of them the last `touched` are touched by hard rows
    int runs() const { return (int)runStart.size() - 1; }
    int dofs() const { return 3 * nodes; }
    int touchedDofs() const { return 3 * touched; }
};

// Fills the layout from its inputs (rows rows, bodies bodies). False: no soft row, too many hard
// rows or touched DOFs (the limits above), or no fill-reducing order (then the signature is
// cleared): the step keeps the iterative solve.
bool layoutCondensedRows(CondensedLayout& L, int rows, int bodies);

}  // namespace cs
