// The host layout of the condensed solve (condensed_layout.h).
#include "engine/exec/condensed_layout.h"

#include <Eigen/SparseCore>
#include <algorithm>

#include "engine/exec/host_factor.h"
#include "engine/solver/condensed_rows_hd.h"

namespace cs {

bool layoutCondensedRows(CondensedLayout& L, int n, int nb) {
    const int* rowBody = L.rowBody.data();
    L.soft.clear();
    L.hard.clear();
    L.hardLinear.clear();
    L.linearIndex.clear();
    L.patternChanged = false;
    for (int i = 0; i < n; ++i) {
        if (L.rowClass[i] == kCondensedSoft) {
            L.soft.push_back(i);
            continue;
        }
        if (L.rowClass[i] == kCondensedHardLinear) L.linearIndex.push_back((int)L.hard.size());
        L.hard.push_back(i);
        L.hardLinear.push_back(L.rowClass[i] == kCondensedHardLinear);
    }
    if (L.soft.empty()) return false;
    const int nh = (int)L.hard.size();
    if (nh > kMaxDenseHardRows) return false;

    // Runs of soft rows on the same bodies, and the structure's signature.
    L.runStart.clear();
    std::vector<int> signature{nb};
    for (size_t s = 0; s < L.soft.size(); ++s) {
        int body[4];
        for (int c = 0; c < 4; ++c) {   // static columns drop out of K
            const int b = rowBody[4 * L.soft[s] + c];
            body[c] = b >= 0 && L.bodyKind[b] == kCondensedPoint ? b : -1;
        }
        bool fresh = s == 0;
        if (!fresh) {
            const size_t at = signature.size() - 4;
            for (int c = 0; c < 4; ++c) fresh = fresh || signature[at + c] != body[c];
        }
        if (fresh) {
            L.runStart.push_back((int)s);
            for (int c = 0; c < 4; ++c) signature.push_back(body[c]);
        }
    }
    L.runStart.push_back((int)L.soft.size());
    const int runs = L.runs();

    // The nodes the hard rows touch: they go last in K's order, so that the factor's trailing
    // block is their Schur complement (condensed_solve.h); they belong to the signature too.
    const size_t runPart = signature.size();
    std::vector<int> touchedNodes;   // bodies
    {
        std::vector<char> inK(nb, 0), seen(nb, 0);
        for (size_t k = 1; k < runPart; ++k)
            if (signature[k] >= 0) inK[signature[k]] = 1;
        for (int i : L.hard)
            for (int c = 0; c < 4; ++c) {
                const int b = rowBody[4 * i + c];
                if (b >= 0 && inK[b] && !seen[b]) {
                    seen[b] = 1;
                    touchedNodes.push_back(b);
                }
            }
        if (3 * (int)touchedNodes.size() > kMaxTouchedDofs) return false;
        std::sort(touchedNodes.begin(), touchedNodes.end());
        signature.insert(signature.end(), touchedNodes.begin(), touchedNodes.end());
    }
    L.touched = (int)touchedNodes.size();

    // Each run's pairs of K bodies (b1, b2) at its columns (c1, c2), both in K.
    auto forEachRunPair = [&](auto&& visit) {
        for (int r = 0; r < runs; ++r)
            for (int c1 = 0; c1 < 4; ++c1)
                for (int c2 = 0; c2 < 4; ++c2) {
                    const int b1 = signature[1 + 4 * r + c1], b2 = signature[1 + 4 * r + c2];
                    if (b1 >= 0 && b2 >= 0) visit(r, c1, c2, b1, b2);
                }
    };
    std::vector<int>& bodyNode = L.bodyNode;
    if (signature != L.signature) {
        // Node order: constrained approximate minimum degree (CAMD) on the node graph (a third of
        // the DOF graph's size, 3 x 3 blocks kept together), the touched nodes constrained last.
        // pneunet_finger: 33 Mflop per factorization against 55 with the untouched nodes by plain
        // AMD and the touched ones appended (the 279 touched DOFs cost only 24.5 -> 33).
        L.signature = signature;
        std::vector<int> candidates;   // K bodies
        std::vector<char> isTouched(nb, 0);
        for (int b : touchedNodes) isTouched[b] = 1;
        bodyNode.assign(nb, -1);
        for (size_t k = 1; k < runPart; ++k)
            if (signature[k] >= 0) bodyNode[signature[k]] = 0;
        for (int b = 0; b < nb; ++b)
            if (bodyNode[b] >= 0) {
                bodyNode[b] = (int)candidates.size();
                candidates.push_back(b);
            }
        const int count = (int)candidates.size();
        std::vector<Eigen::Triplet<double, int>> adjacency;   // lower triangle of the node graph
        for (int q = 0; q < count; ++q) adjacency.emplace_back(q, q, 1.0);
        forEachRunPair([&](int, int, int, int b1, int b2) {
            if (bodyNode[b1] > bodyNode[b2]) adjacency.emplace_back(bodyNode[b1], bodyNode[b2], 1.0);
        });
        Eigen::SparseMatrix<double, Eigen::ColMajor, int> graph(count, count);
        graph.setFromTriplets(adjacency.begin(), adjacency.end());
        graph.makeCompressed();
        std::vector<int> member(count), order(count);   // constraint set: 1 touched (last), 0 the others
        for (int q = 0; q < count; ++q) member[q] = isTouched[candidates[q]];
        if (!fillReducingOrder(count, graph.outerIndexPtr(), graph.innerIndexPtr(), member.data(), order.data(),
                               nullptr)) {
            L.signature.clear();   // no order: the next step starts the structure again
            return false;
        }
        L.nodeBody.clear();
        for (int k = 0; k < count; ++k) L.nodeBody.push_back(candidates[order[k]]);   // order[k]: eliminated k-th
        for (int q = 0; q < (int)L.nodeBody.size(); ++q) bodyNode[L.nodeBody[q]] = q;
        const int nodes = (int)L.nodeBody.size();
        std::vector<std::vector<int>> column(nodes);   // rows (nodes p >= q) of block column q
        for (int q = 0; q < nodes; ++q) column[q].push_back(q);
        forEachRunPair([&](int, int, int, int b1, int b2) {
            const int p = bodyNode[b1], q = bodyNode[b2];
            if (p > q) column[q].push_back(p);
        });
        for (auto& col : column) {
            std::sort(col.begin(), col.end());
            col.erase(std::unique(col.begin(), col.end()), col.end());
        }
        const int dofs = 3 * nodes;
        L.colStart.assign(dofs + 1, 0);
        L.rowIndex.clear();
        L.nodeColumnLength.assign(nodes, 0);
        L.diagSlot.assign(nodes, 0);
        for (int q = 0; q < nodes; ++q) {
            L.nodeColumnLength[q] = 3 * (int)column[q].size();
            for (int c = 0; c < 3; ++c) {
                L.colStart[3 * q + c] = (int)L.rowIndex.size();
                for (int p : column[q])
                    for (int r = 0; r < 3; ++r) L.rowIndex.push_back(3 * p + r);
            }
            L.diagSlot[q] = L.colStart[3 * q];   // the diagonal block comes first (p = q is the least)
        }
        L.colStart[dofs] = (int)L.rowIndex.size();
        // Value index of entry (3p, 3q) of each run's blocks; entry (3p + r, 3q + c) is that + c * len + r.
        L.runSlot.assign(16 * (size_t)runs, -1);
        L.runLength.assign(16 * (size_t)runs, 0);
        forEachRunPair([&](int r, int c1, int c2, int b1, int b2) {
            const int p = bodyNode[b1], q = bodyNode[b2];
            if (p < q) return;
            const auto& col = column[q];
            const int rank = int(std::lower_bound(col.begin(), col.end(), p) - col.begin());
            L.runSlot[16 * r + 4 * c1 + c2] = L.colStart[3 * q] + 3 * rank;
            L.runLength[16 * r + 4 * c1 + c2] = L.nodeColumnLength[q];
        });
        L.patternChanged = true;
    }
    L.nodes = (int)L.nodeBody.size();

    // The touched block's columns, and the hard rows' terms through W on every other dynamic body.
    const int first = L.nodes - L.touched;
    L.touchedDof.assign(L.nodes, -1);
    for (int q = first; q < L.nodes; ++q) L.touchedDof[q] = 3 * (q - first);
    L.entryStart.assign(nb + 1, 0);
    for (int j = 0; j < nh; ++j)
        for (int c = 0; c < 4; ++c) {
            const int b = rowBody[4 * L.hard[j] + c];
            if (b >= 0 && bodyNode[b] < 0 && L.bodyKind[b] != kCondensedStatic) L.entryStart[b + 1]++;
        }
    for (int b = 0; b < nb; ++b) L.entryStart[b + 1] += L.entryStart[b];
    L.entries.assign(2 * (size_t)L.entryStart[nb], 0);
    std::vector<int> fill(L.entryStart.begin(), L.entryStart.end() - 1);
    for (int j = 0; j < nh; ++j)
        for (int c = 0; c < 4; ++c) {
            const int b = rowBody[4 * L.hard[j] + c];
            if (b < 0 || bodyNode[b] >= 0 || L.bodyKind[b] == kCondensedStatic) continue;
            const int e = fill[b]++;
            L.entries[2 * e] = j;
            L.entries[2 * e + 1] = c;
        }
    return true;
}

}  // namespace cs
