// The constant-strain tetrahedron's kinematics and the two materials' compliance rows
// (engine/fem/): checked against closed forms of linear elasticity, finite differences and
// invariances, before any element enters the solver.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/fem/fem_material_hd.h"
#include "engine/fem/fem_rows_hd.h"
#include "engine/fem/fem_lanes.h"

using namespace cs;

namespace {

const Vec3 kRest[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

// doctest::Approx passes when |a - b| < epsilon (scale + max(|a|, |b|)) with scale 1 by default:
// an absolute floor of epsilon, under which a small figure (an energy of 1e-4) always passes.
// The checks of small figures below set scale(0), a purely relative tolerance.

Mat3 randomMatrix(std::mt19937& rng, Real scale) {
    std::uniform_real_distribution<double> u(-1, 1);
    Mat3 m;
    for (auto& r : m.m)
        for (Real& x : r) x = Real(scale * u(rng));
    return m;
}

Real maxDiff(const Mat3& a, const Mat3& b) {
    Real d = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) d = std::fmax(d, std::fabs(a.m[i][j] - b.m[i][j]));
    return d;
}

// Nodes deformed by x -> A x + t.
void deform(const Mat3& A, Vec3 t, Vec3 x[4]) {
    for (int j = 0; j < 4; ++j) x[j] = A * kRest[j] + t;
}

Real elementEnergy(const FemMaterial& m, const TetRest& r, const Vec3 x[4]) {
    return r.volume * femEnergyDensity(m, deformationGradient(r, x[0], x[1], x[2], x[3]));
}

}  // namespace

TEST_CASE("fem: rest data, and inverted or degenerate tets are refused") {
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    CHECK(r.volume == doctest::Approx(1.0 / 6.0).epsilon(1e-15).scale(0));
    CHECK_FALSE(makeTetRest(kRest[0], kRest[2], kRest[1], kRest[3], 0, r));             // inverted
    CHECK_FALSE(makeTetRest(kRest[0], kRest[1], kRest[2], Vec3{1, 1, 0}, 0, r));         // flat
}

TEST_CASE("fem: svd3 reconstructs F with rotations U, V, an inverted F with one negative stretch") {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        Mat3 F = randomMatrix(rng, 1);
        for (int i = 0; i < 3; ++i) F.m[i][i] += 1;
        Mat3 U, V;
        Vec3 s;
        svd3(F, U, s, V);
        CHECK(maxDiff(U * mat3Diag(s) * transpose(V), F) < 1e-9);
        CHECK(maxDiff(transpose(U) * U, mat3Identity()) < 1e-12);
        CHECK(maxDiff(transpose(V) * V, mat3Identity()) < 1e-12);
        CHECK(determinant(U) == doctest::Approx(1));
        CHECK(determinant(V) == doctest::Approx(1));
        CHECK(s.x >= s.y);
        CHECK(s.y >= std::fabs(s.z) - 1e-12);
        CHECK((s.z < 0) == (determinant(F) < 0));
    }
}

// svd3Many (the energy guard's end-of-step SVDs, several per vector register) must give svd3's
// bits, also where lanes take different branches: sweeps to convergence, an already diagonal F
// (no rotation), sorted or swapped stretches, an inverted F, a rank-deficient or zero F, and a
// count that leaves the last register part full.
TEST_CASE("fem: svd3Many gives svd3's results bit for bit") {
    std::mt19937 rng(11);
    std::vector<Mat3> F;
    for (int trial = 0; trial < 300; ++trial) {
        Mat3 f = randomMatrix(rng, trial % 3 == 0 ? Real(1e-3) : Real(1));
        for (int i = 0; i < 3; ++i) f.m[i][i] += trial % 2 ? 1 : 0;
        if (trial % 7 == 0) f.m[0][0] = -f.m[0][0];   // inverted, mostly
        F.push_back(f);
    }
    F.push_back(mat3Identity());
    F.push_back(mat3Diag(Vec3{1, 2, 3}));
    F.push_back(mat3Diag(Vec3{3, 2, -1}));
    F.push_back(mat3Zero());
    F.push_back(Mat3{{{1, 2, 3}, {2, 4, 6}, {-1, -2, -3}}});   // rank 1
    F.push_back(Mat3{{{1, 0, 0}, {0, 1, 0}, {0, 0, 0}}});      // rank 2
    F.push_back(Mat3{{{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}});      // a reflection
    const int n = int(F.size());
    CHECK(n % svd3lanes::kLanes != 0);
    std::vector<TetSvd> many(n);
    svd3Many(F.data(), n, many.data());
    int same = 0;
    for (int i = 0; i < n; ++i) {
        TetSvd one;
        svd3(F[i], one.U, one.s, one.V);
        same += std::memcmp(&one.U, &many[i].U, sizeof(Mat3)) == 0 && std::memcmp(&one.V, &many[i].V, sizeof(Mat3)) == 0 &&
                std::memcmp(&one.s, &many[i].s, sizeof(Vec3)) == 0;
    }
    CHECK(same == n);
}

// femTetWarmImpulsesLanes (the warm start's least squares, several tets per vector register) must
// give femTetWarmImpulses's bits: deformed tets of both materials, a tet with a zero row and one
// with two equal rows (rows dropped from the Cholesky factor), a block that is not full.
TEST_CASE("fem: femTetWarmImpulsesLanes gives femTetWarmImpulses's results bit for bit") {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1, 1);
    TetRest rest;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, rest));
    const int lanes = svd3lanes::kLanes;
    int same = 0, total = 0;
    for (int block = 0; block < 40; ++block) {
        const int m = block % 3 == 2 ? lanes - 1 : lanes;
        FemTetStepRows r[lanes];
        Real stored[lanes][kFemWarmPerTet];
        const Real* storedPtr[lanes];
        for (int l = 0; l < m; ++l) {
            Mat3 A = randomMatrix(rng, Real(0.3));
            for (int i = 0; i < 3; ++i) A.m[i][i] += 1;
            Vec3 x[4];
            deform(A, Vec3{0, 0, 1}, x);
            const FemMaterial mat = femMaterial(l % 2 ? FemMaterialType::StableNeoHookean : FemMaterialType::CorotatedLinear,
                                                1e5, 0.4);
            femTetStepRows(mat, rest, x[0], x[1], x[2], x[3], 0, 0, Real(0.01), r[l]);
            for (Real& v : stored[l]) v = Real(u(rng));
            storedPtr[l] = stored[l];
            if (block == 3 && l == 0)
                for (int j = 0; j < 4; ++j) r[l].jacobian[2][j] = Vec3{0, 0, 0};
            if (block == 4 && l == 1)
                for (int j = 0; j < 4; ++j) r[l].jacobian[4][j] = r[l].jacobian[1][j];
        }
        Real many[lanes][kFemMaxRows];
        femTetWarmImpulsesLanes(r, storedPtr, many, m);
        for (int l = 0; l < m; ++l) {
            Real one[kFemMaxRows];
            femTetWarmImpulses(r[l], storedPtr[l], one);
            same += std::memcmp(one, many[l], sizeof(one)) == 0;
            ++total;
        }
    }
    CHECK(same == total);
}

TEST_CASE("fem: a rigid motion costs no energy and gives zero rows in both materials") {
    std::mt19937 rng(3);
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    for (FemMaterialType type : {FemMaterialType::CorotatedLinear, FemMaterialType::StableNeoHookean}) {
        const FemMaterial m = femMaterial(type, 1e5, 0.45);
        for (int trial = 0; trial < 20; ++trial) {
            const Vec3 axis = normalize(Vec3{Real(rng() % 100) - 50, Real(rng() % 100) - 50, 1});
            const Mat3 R = toMat3(quatFromAxisAngle(axis, Real(0.1) * trial));
            Vec3 x[4];
            deform(R, Vec3{1, -2, 3}, x);
            FemRow rows[kFemMaxRows];
            const int n = femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
            for (int k = 0; k < n; ++k) CHECK(std::fabs(rows[k].value) < 1e-12);
            // Energy relative to the rest state's (stable neo-Hookean's Psi(I) = D1 (1 - alpha)^2 is
            // a constant offset of the energy, not a stress).
            CHECK(std::fabs(elementEnergy(m, r, x) - r.volume * femEnergyDensity(m, mat3Identity())) < 1e-12 * m.mu);
        }
    }
}

TEST_CASE("fem: corotated rows give linear elasticity's energy and Young's modulus in uniaxial stress") {
    // U = 1/2 sum_k C_k^2 / alpha_k must equal V (mu eps:eps + lambda/2 tr(eps)^2) for any small
    // symmetric strain, and a bar stretched by e with lateral contraction nu e has stress Y e:
    // dU/de = Y e V (the closed form of uniaxial stress).
    const Real Y = 1e5, nu = 0.45;
    const FemMaterial m = femMaterial(FemMaterialType::CorotatedLinear, Y, nu);
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    std::mt19937 rng(11);
    for (int trial = 0; trial < 20; ++trial) {
        Mat3 E = randomMatrix(rng, 1e-3);
        E = Real(0.5) * (E + transpose(E));
        Vec3 x[4];
        deform(mat3Identity() + E, Vec3{0, 0, 0}, x);
        FemRow rows[kFemMaxRows];
        femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
        Real fromRows = 0;
        for (const FemRow& row : rows) fromRows += Real(0.5) * row.value * row.value / row.compliance;
        const Real tr = trace(E);
        const Real closed = r.volume * (m.mu * frobenius(E, E) + Real(0.5) * m.lambda * tr * tr);
        CHECK(fromRows == doctest::Approx(closed).epsilon(1e-9).scale(0));   // relative: closed is ~1e-2 J
    }
    const Real e = 1e-4, de = 1e-7;
    auto energy = [&](Real strain) {
        Vec3 x[4];
        deform(mat3Diag({1 + strain, 1 - nu * strain, 1 - nu * strain}), Vec3{0, 0, 0}, x);
        FemRow rows[kFemMaxRows];
        femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
        Real u = 0;
        for (const FemRow& row : rows) u += Real(0.5) * row.value * row.value / row.compliance;
        return u;
    };
    const Real stress = (energy(e + de) - energy(e - de)) / (2 * de) / r.volume;
    CHECK(stress == doctest::Approx(Y * e).epsilon(1e-4).scale(0));   // relative: Y e = 10 Pa
}

TEST_CASE("fem: row gradients match finite differences of the principal stretches and shears, both materials") {
    std::mt19937 rng(5);
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    const Real step = 1e-6;
    for (FemMaterialType type : {FemMaterialType::CorotatedLinear, FemMaterialType::StableNeoHookean}) {
        const FemMaterial m = femMaterial(type, 1e5, 0.3);
        for (int trial = 0; trial < 10; ++trial) {
            // A rotation times a general deformation.
            Mat3 A = toMat3(quatFromAxisAngle(normalize(Vec3{1, 2, 3}), Real(0.3) * trial));
            Mat3 D = randomMatrix(rng, 0.3);
            for (int i = 0; i < 3; ++i) D.m[i][i] += 1;
            A = A * D;
            Vec3 x[4];
            deform(A, Vec3{0.5, 0, -1}, x);
            FemRow rows[kFemMaxRows];
            const int n = femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
            Mat3 U0, V0, N0, Q0;
            Vec3 s0, grad0, lam0;
            svd3(deformationGradient(r, x[0], x[1], x[2], x[3]), U0, s0, V0);
            femStretchDerivatives(m, s0, 0, grad0, N0);
            symmetricEigen(N0, lam0, Q0);
            // The rows' strain measure: q_k . s with q_k the eigenvectors of the stretch Hessian
            // at x (fixed), and the principal shears.
            auto measure = [&](const Vec3 y[4], int k) {
                const Mat3 F = deformationGradient(r, y[0], y[1], y[2], y[3]);
                Mat3 U, V;
                Vec3 s;
                svd3(F, U, s, V);
                if (k < 3) return dot(column(Q0, k), s);
                // Shear rows: sqrt(2) v_i^T S v_j, S = R^T F the polar stretch, v_i and v_j the
                // principal axes at the base point x (fixed).
                const int i = k == 5 ? 1 : 0, j = k == 3 ? 1 : 2;
                const Mat3 S = transpose(polarRotation(F)) * F;
                return sqrt(Real(2)) * dot(column(V0, i), S * column(V0, j));
            };
            for (int k = 0; k < n; ++k)
                for (int j = 0; j < 4; ++j)
                    for (int a = 0; a < 3; ++a) {
                        Vec3 xp[4], xm[4];
                        for (int i = 0; i < 4; ++i) xp[i] = xm[i] = x[i];
                        xp[j][a] += step;
                        xm[j][a] -= step;
                        const Real fd = (measure(xp, k) - measure(xm, k)) / (2 * step);
                        CHECK(std::fabs(fd - rows[k].grad[j][a]) < 1e-6);
                    }
        }
    }
}

// The rows' linearization is the step's model of the force: f(x + dx) ~ -sum_k J_k^T (C_k + J_k dx) / alpha_k.
// Under a change of the stretches alone (dF diagonal in the principal frame) it must be the
// exact change of the elastic force, i.e. eq. 84's E = (V N)^-1 with the full stretch Hessian N.
// Appendix B's diagonal approximation (alpha_i = 1 / (V N_ii)) misses N's off-diagonal lambda
// terms: at nu = 0.45 a volumetric dF gets 0.38 of its force change (relative error 0.62).
// Where N is indefinite (stretched well beyond J = alpha, or compressed below J = alpha / 2) the
// projection replaces it, by design; the states below keep N positive definite.
TEST_CASE("fem: neo-Hookean rows linearize the force with the full stretch Hessian (eq. 84)") {
    const FemMaterial m = femMaterial(FemMaterialType::StableNeoHookean, 1e5, 0.45);
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    auto force = [&](const Vec3 x[4], Vec3 f[4], FemRow rows[kFemMaxRows]) {
        const int n = femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
        for (int j = 0; j < 4; ++j) f[j] = Vec3{0, 0, 0};
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < 4; ++j) f[j] -= (rows[k].value / rows[k].compliance) * rows[k].grad[j];
        return n;
    };
    const Real eps = 1e-6;
    for (const Vec3 stretch : {Vec3{1, 1, 1}, Vec3{0.7, 0.8, 0.9}, Vec3{1.3, 0.9, 0.85}, Vec3{1.1, 1, 0.95}})
        for (const Vec3 dir : {Vec3{1, 1, 1}, Vec3{1, 0.5, -0.3}, Vec3{0, 0, 1}}) {
            Vec3 grad, lam;   // N positive definite here (above the projection's floor C1 = mu / 2)
            Mat3 N, Q;
            neoHookeanStretchDerivatives(m, stretch, 0, grad, N);
            symmetricEigen(N, lam, Q);
            REQUIRE(std::fmin(lam.x, std::fmin(lam.y, lam.z)) > m.mu / 2);
            Vec3 x[4], y[4], f0[4], f1[4];
            deform(mat3Diag(stretch), Vec3{0, 0, 0}, x);
            deform(mat3Diag(stretch + eps * dir), Vec3{0, 0, 0}, y);
            FemRow rows[kFemMaxRows], rowsY[kFemMaxRows];
            const int n = force(x, f0, rows);
            force(y, f1, rowsY);
            Real err = 0, size = 0;
            for (int j = 0; j < 4; ++j) {
                Vec3 predicted{0, 0, 0};
                for (int k = 0; k < n; ++k) {
                    Real jdx = 0;
                    for (int i = 0; i < 4; ++i) jdx += dot(rows[k].grad[i], y[i] - x[i]);
                    predicted -= (jdx / rows[k].compliance) * rows[k].grad[j];
                }
                const Vec3 exact = f1[j] - f0[j];
                err = std::fmax(err, length(predicted - exact));
                size = std::fmax(size, length(exact));
            }
            INFO("stretch " << stretch.x << " " << stretch.y << " " << stretch.z << ", direction " << dir.x << " "
                 << dir.y << " " << dir.z << ": relative error " << err / size);
            CHECK(err <= Real(1e-4) * size);
        }
    // Below J = alpha / 2 the energy is concave in the volume (N's off-diagonal 2 D1 (2 J - alpha)
    // turns negative): there the projection holds every compliance positive and finite.
    Vec3 x[4];
    deform(mat3Diag({0.5, 0.45, 0.4}), Vec3{0, 0, 0}, x);
    FemRow rows[kFemMaxRows];
    const int n = femElementRows(m, r, x[0], x[1], x[2], x[3], rows);
    for (int k = 0; k < n; ++k) {
        CHECK(rows[k].compliance > 0);
        CHECK(rows[k].compliance <= Real(1 + 1e-9) / (r.volume * m.mu / 2));   // stiffness >= C1
    }
}

TEST_CASE("fem: stable neo-Hookean agrees with the linear material at small strain and resists inversion") {
    const FemMaterial nh = femMaterial(FemMaterialType::StableNeoHookean, 1e5, 0.45);
    const FemMaterial lin = femMaterial(FemMaterialType::CorotatedLinear, 1e5, 0.45);
    std::mt19937 rng(13);
    for (int trial = 0; trial < 20; ++trial) {
        Mat3 E = randomMatrix(rng, 1e-4);
        E = Real(0.5) * (E + transpose(E));
        const Mat3 F = mat3Identity() + E;
        // Energies agree to second order: relative difference O(|E|).
        const Real excess = femEnergyDensity(nh, F) - femEnergyDensity(nh, mat3Identity());
        CHECK(excess == doctest::Approx(femEnergyDensity(lin, F)).epsilon(1e-3).scale(0));   // relative: ~1e-4 J/m^3
    }
    // An inverted element: its smallest stretch is negative, and raising it lowers the energy.
    const Mat3 F = mat3Diag({1, 1, Real(-0.2)});
    Mat3 U, V;
    Vec3 s;
    svd3(F, U, s, V);
    REQUIRE(s.z < 0);
    const Mat3 Fup = mat3Diag({1, 1, Real(-0.19)});
    CHECK(femEnergyDensity(nh, Fup) < femEnergyDensity(nh, F));
}

// ---- meshes (engine/fem/tet_mesh.h) --------------------------------------------------------

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include "engine/fem/tet_mesh.h"

namespace {

// Volume enclosed by a closed outward surface (divergence theorem) and whether every edge is
// shared by exactly two triangles in opposite directions (closed and consistently oriented).
Real enclosedVolume(const TetMesh& m, const std::vector<std::array<int, 3>>& tris, bool& closed) {
    std::map<std::pair<int, int>, int> edges;
    Real v = 0;
    for (const auto& t : tris) {
        v += dot(m.nodes[t[0]], cross(m.nodes[t[1]], m.nodes[t[2]])) / 6;
        for (int c = 0; c < 3; ++c) edges[{t[c], t[(c + 1) % 3]}]++;
    }
    closed = true;
    for (const auto& [e, n] : edges) closed = closed && n == 1 && edges.count({e.second, e.first}) == 1;
    return v;
}

Real meshVolume(const TetMesh& m) {
    Real v = 0;
    for (int t = 0; t < int(m.tets.size()); ++t) v += tetVolume(m, t);
    return v;
}

}  // namespace

TEST_CASE("fem mesh: the box generator is conforming, positive and closed; masses sum to rho V") {
    const Vec3 h{1, 0.25, 0.5};
    const TetMesh m = makeBoxTetMesh(h, 8);   // 8 x 2 x 4 cells
    CHECK(m.tets.size() == 6u * 8 * 2 * 4);
    std::string err;
    CHECK(validateTetMesh(m, 0, &err));
    CHECK(meshVolume(m) == doctest::Approx(8 * h.x * h.y * h.z).epsilon(1e-12));
    const auto surface = boundaryTriangles(m);
    CHECK(surface.size() == 2u * 2 * (8 * 2 + 8 * 4 + 2 * 4));   // two triangles per boundary square
    bool closed = false;
    CHECK(enclosedVolume(m, surface, closed) == doctest::Approx(meshVolume(m)).epsilon(1e-12));
    CHECK(closed);
    Real total = 0;
    for (Real x : lumpedNodeMasses(m, 1000)) total += x;
    CHECK(total == doctest::Approx(1000 * meshVolume(m)).epsilon(1e-12));
}

TEST_CASE("fem mesh: TetGen fills a sphere's surface exactly, and bad meshes get one-line errors") {
    TetMesh m;
    std::string err;
    REQUIRE_MESSAGE(makeSphereTetMesh(0.5, 2, 4, m, &err), err);
    CHECK(validateTetMesh(m, 0, &err));
    bool closed = false;
    const Real enclosed = enclosedVolume(m, boundaryTriangles(m), closed);
    CHECK(closed);
    CHECK(meshVolume(m) == doctest::Approx(enclosed).epsilon(1e-9));   // 'p' keeps the surface
    const Real ball = Real(4.0 / 3.0) * Real(M_PI) * Real(0.125);
    CHECK(meshVolume(m) > 0.9 * ball);                                  // a 320-triangle icosphere
    CHECK(meshVolume(m) < ball);
    MESSAGE("sphere r 0.5: " << m.nodes.size() << " nodes, " << m.tets.size() << " tets, volume "
                             << meshVolume(m) << " of the ball's " << ball);

    TetMesh bad = makeBoxTetMesh({1, 1, 1}, 1);
    std::swap(bad.tets[2][0], bad.tets[2][1]);
    CHECK_FALSE(validateTetMesh(bad, 0, &err));
    CHECK(err == "tet 2 is inverted (volume -1.333333 m^3)");
    std::vector<Vec3> open = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    CHECK_FALSE(tetrahedralizeSurface(open, {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}}, 0, bad, &err));
    CHECK(err.find('\n') == std::string::npos);
}

TEST_CASE("fem mesh: TetGen .node/.ele files round-trip; a missing node is a one-line error") {
    const TetMesh box = makeBoxTetMesh({0.5, 0.5, 0.5}, 2);
    const auto dir = std::filesystem::temp_directory_path();
    const std::string node = (dir / ("cs_test_fem_" + std::to_string(getpid()) + ".node")).string(),
                      ele = (dir / ("cs_test_fem_" + std::to_string(getpid()) + ".ele")).string();
    {
        std::ofstream n(node), e(ele);
        n << "# a 2x2x2 box\n" << box.nodes.size() << " 3 0 0\n";
        for (size_t i = 0; i < box.nodes.size(); ++i)
            n << i + 1 << " " << box.nodes[i].x << " " << box.nodes[i].y << " " << box.nodes[i].z << "\n";
        e << box.tets.size() << " 4 0\n";
        for (size_t t = 0; t < box.tets.size(); ++t)
            e << t + 1 << " " << box.tets[t][0] + 1 << " " << box.tets[t][1] + 1 << " " << box.tets[t][2] + 1 << " "
              << box.tets[t][3] + 1 << "  # one-based\n";
    }
    TetMesh m;
    std::string err;
    REQUIRE_MESSAGE(loadTetGenFiles(node, ele, m, &err), err);
    CHECK(m.tets == box.tets);
    CHECK(meshVolume(m) == doctest::Approx(1.0));
    {
        std::ofstream e(ele);
        e << "1 4 0\n1 1 2 3 999\n";
    }
    CHECK_FALSE(loadTetGenFiles(node, ele, m, &err));
    CHECK(err.find("names node 999") != std::string::npos);
    std::remove(node.c_str());
    std::remove(ele.c_str());
    CHECK_FALSE(loadTetGenFiles(node, ele, m, &err));
    CHECK(err.rfind("cannot read tet mesh nodes", 0) == 0);
}

// fem_rows_hd.h's warm start: the impulses of last step's rows, as node impulses in the element's
// polar frame, given to the rows of a turned element. Near rest (here an isotropic stretch, where
// the principal frame is wholly arbitrary, and a slightly sheared one) the row directions differ
// between the two poses, so the rows' own impulses cannot be reused; the node impulses they give,
// turned with the element, can, and for an element that kept its shape exactly.
TEST_CASE("fem warm start: the node impulses of the rows turn with the element, whatever its principal frame") {
    const FemMaterial m = femMaterial(FemMaterialType::StableNeoHookean, 1e5, 0.45);
    TetRest r;
    REQUIRE(makeTetRest(kRest[0], kRest[1], kRest[2], kRest[3], 0, r));
    const Real h = Real(1) / 120;
    const Mat3 Q = toMat3(quatFromAxisAngle(normalize(Vec3{1, 2, 3}), Real(0.5)));
    Mat3 sheared = mat3Identity();
    sheared.m[0][1] = sheared.m[1][0] = 1e-4;
    sheared.m[2][2] = 1.0005;
    const Mat3 isotropic = Real(1.001) * mat3Identity();
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int pose = 0; pose < 2; ++pose) {
        const Mat3& A = pose == 0 ? isotropic : sheared;
        Vec3 x[4], y[4];
        deform(A, Vec3{0.3, -0.2, 1.0}, x);
        for (int j = 0; j < 4; ++j) y[j] = Q * x[j] + Vec3{-1, 0.5, 0.25};
        FemTetStepRows a, b;
        femTetStepRows(m, r, x[0], x[1], x[2], x[3], 0, 0, h, a);
        femTetStepRows(m, r, y[0], y[1], y[2], y[3], 0, 0, h, b);
        REQUIRE(a.count == kFemMaxRows);
        Real lambda[kFemMaxRows], warm[kFemMaxRows], stored[kFemWarmPerTet];
        Spatial jb[kFemMaxRows], jc[kFemMaxRows], jd[kFemMaxRows];
        for (int k = 0; k < a.count; ++k) {
            lambda[k] = Real(u(rng));
            jb[k] = Spatial{a.jacobian[k][1], {0, 0, 0}};
            jc[k] = Spatial{a.jacobian[k][2], {0, 0, 0}};
            jd[k] = Spatial{a.jacobian[k][3], {0, 0, 0}};
        }
        femTetWarmStore(a.count, jb, jc, jd, lambda, a.rotation, stored);
        femTetWarmImpulses(b, stored, warm);
        Real scale = 0, err = 0, rowTurn = 0;
        for (int j = 0; j < 4; ++j) {
            Vec3 fa{0, 0, 0}, fb{0, 0, 0};
            for (int k = 0; k < a.count; ++k) {
                fa += lambda[k] * a.jacobian[k][j];
                fb += warm[k] * b.jacobian[k][j];
            }
            scale = std::fmax(scale, length(fa));
            err = std::fmax(err, length(fb - Q * fa));
        }
        // The rows' own directions do change between the poses (else reusing lambda would do).
        for (int k = 0; k < a.count; ++k)
            for (int j = 0; j < 4; ++j) rowTurn = std::fmax(rowTurn, length(b.jacobian[k][j] - Q * a.jacobian[k][j]));
        INFO("node impulses " << scale << ", error " << err << ", largest change of a row's turned gradient " << rowTurn);
        CHECK(scale > 0.1);
        CHECK(err < 1e-9 * scale);
        if (pose == 0) CHECK(rowTurn > 0.1);   // the isotropic pose's frame is arbitrary: its rows turned otherwise
    }
}
