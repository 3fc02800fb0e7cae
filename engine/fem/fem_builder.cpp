// Adds a tetrahedral FEM body to a Model (fem_builder.h).
#include "engine/fem/fem_builder.h"

#include <algorithm>
#include <cmath>

namespace cs {

namespace {

int fail(std::string* error, const std::string& message) {
    if (error) *error = message;
    return -1;
}

// Smallest tet volume accepted: a tet this much thinner than the mesh's bounding box is degenerate.
Real minTetVolume(const TetMesh& mesh) {
    Real size = 0;
    for (const Vec3& p : mesh.nodes)
        for (int k = 0; k < 3; ++k) size = std::max(size, std::abs(p[k] - mesh.nodes[0][k]));
    return Real(1e-12) * size * size * size;
}

}  // namespace

int addFemBody(Model& model, const FemBodyDesc& desc, std::string* error) {
    const std::string who = "deformable body '" + desc.name + "'";
    if (desc.mesh.nodes.empty() || desc.mesh.tets.empty()) return fail(error, who + " has an empty tet mesh");
    if (!(desc.youngs > 0) || !std::isfinite(desc.youngs)) return fail(error, who + ": youngs must be positive");
    if (!(desc.poisson > -1 && desc.poisson < Real(0.5)))
        return fail(error, who + ": poisson must lie in (-1, 0.5)");
    if (!(desc.density > 0) || !std::isfinite(desc.density)) return fail(error, who + ": density must be positive");
    if (!(desc.damping >= 0) || !std::isfinite(desc.damping)) return fail(error, who + ": damping must be non-negative");
    if (desc.material.friction < 0) return fail(error, who + ": friction must be non-negative");
    std::string meshError;
    if (!validateTetMesh(desc.mesh, minTetVolume(desc.mesh), &meshError)) return fail(error, who + ": " + meshError);
    const int nodes = (int)desc.mesh.nodes.size(), tets = (int)desc.mesh.tets.size();
    for (int p : desc.pinned)
        if (p < 0 || p >= nodes) return fail(error, who + ": pinned node " + std::to_string(p) + " is not in the mesh");
    for (const auto& a : desc.attached) {
        if (a[0] < 0 || a[0] >= nodes)
            return fail(error, who + ": attached node " + std::to_string(a[0]) + " is not in the mesh");
        if (a[1] < 0 || a[1] >= model.bodyCount())
            return fail(error, who + ": node " + std::to_string(a[0]) + " is attached to a body that does not exist");
    }
    if (!desc.activation.empty() && (int)desc.activation.size() != tets)
        return fail(error, who + ": activation needs one weight per tet");

    const int body = (int)model.femBodies.size();
    const int firstNode = model.femNodeCount(), firstTet = model.femTetCount();
    FemBodyInfo info;
    info.name = desc.name.empty() ? "deformable" + std::to_string(body) : desc.name;
    info.firstNode = firstNode;
    info.nodeCount = nodes;
    info.firstTet = firstTet;
    info.tetCount = tets;
    info.firstTri = (int)model.femTris.size();
    info.material = femMaterial(desc.type, desc.youngs, desc.poisson);
    info.youngs = desc.youngs;
    info.poisson = desc.poisson;
    info.density = desc.density;
    info.damping = desc.damping;
    info.contact = desc.material;
    info.selfContact = desc.selfContact;
    info.color = desc.color;

    const std::vector<Real> mass = lumpedNodeMasses(desc.mesh, desc.density);
    for (int i = 0; i < nodes; ++i) {
        const Vec3 x = transformPoint(desc.pose, desc.mesh.nodes[i]);
        model.femRestPos.push_back(x);
        model.femInitialPos.push_back(x);
        model.femInitialVel.push_back(desc.linVel);
        model.femNodeMass.push_back(mass[i]);
        model.femNodeInvMass.push_back(Real(1) / mass[i]);
        model.femNodeBody.push_back(body);
    }
    for (int p : desc.pinned) model.femNodeInvMass[firstNode + p] = 0;
    for (int t = 0; t < tets; ++t) {
        const auto& tet = desc.mesh.tets[t];
        TetRest rest;
        // validateTetMesh accepted every tet, and a rigid pose keeps its volume.
        makeTetRest(model.femRestPos[firstNode + tet[0]], model.femRestPos[firstNode + tet[1]],
                    model.femRestPos[firstNode + tet[2]], model.femRestPos[firstNode + tet[3]], 0, rest);
        model.femTets.push_back({firstNode + tet[0], firstNode + tet[1], firstNode + tet[2], firstNode + tet[3]});
        model.femTetRest.push_back(rest);
        model.femTetBody.push_back(body);
        model.femTetActivation.push_back(desc.activation.empty() ? Real(0) : desc.activation[t]);
    }
    for (const auto& tri : boundaryTriangles(desc.mesh))
        model.femTris.push_back({firstNode + tri[0], firstNode + tri[1], firstNode + tri[2]});
    info.triCount = (int)model.femTris.size() - info.firstTri;
    for (const auto& a : desc.attached) {
        FemAttachment at;
        at.node = firstNode + a[0];
        at.body = a[1];
        const Transform bodyPose{model.initialPos[a[1]], model.initialRot[a[1]]};   // addBody sets these
        at.localPoint = rotateInv(bodyPose.rot, model.femInitialPos[at.node] - bodyPose.pos);
        // A node held at a static body's point is a pinned node: the same constraint, exact, with
        // no rows. As three hard rows each (fem_rows_hd.h femAttachmentRows), pneunet_finger's 25
        // base nodes put K^-1 over their 75 DOFs and a dense Schur solve into every condensed
        // solve (condensed_rows.h), and their drift corrections into the nodes' velocities.
        if (model.isStatic(at.body)) {
            model.femNodeInvMass[at.node] = 0;
            model.femStaticPins.push_back(at);
        } else {
            model.femAttachments.push_back(at);
        }
    }
    model.femBodies.push_back(info);
    return body;
}

}  // namespace cs
