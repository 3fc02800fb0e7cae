// What the relaxation methods (the soft step, soft_step.h, and sequential impulses, pgs_step.h)
// share: the solver's bodies, the manifolds gathered from the potential contacts and reduced to at
// most four points, their graph colouring and per-colour contiguous layout, the blocks of kSoftLanes
// manifolds of one colour that the sweeps solve in SIMD lanes (soft_wide.h), the warm-start look-up,
// the joints' and the drag's set-up, the colour-by-colour sweep over the executor, and the store of
// poses, velocities, contacts and warm-start impulses at the step's end. Each method runs its own
// per-row law over these (soft_step_hd.h, pgs_step_hd.h).
#pragma once

#include <string>
#include <vector>

#include "engine/exec/host_executor.h"
#include "engine/solver/soft_step.h"
#include "engine/solver/soft_step_hd.h"
#include "engine/solver/soft_wide.h"

namespace cs {

// Colours a manifold may take (Box2D uses 24); a manifold whose bodies already use all of them
// goes to the overflow colour, solved serially after the others.
constexpr int kRelaxColours = 32;

struct SoftStepScratch {
    HostExecutor exec;
    std::vector<int> solverIndex;        // (bodies) solver body, -1: does not move this step
    std::vector<int> bodyOf;             // (solver bodies) model body
    std::vector<SoftBody> bodies;        // (solver bodies)
    std::vector<Real> invMass;           // (solver bodies)
    std::vector<Mat3> invInertia;        // (solver bodies) world, at the step's start
    struct Pick {                        // a manifold before it is built: its contacts and normal
        int bodyA, bodyB;                // solver bodies
        int count;
        int contact[kSoftMaxPoints];
        Vec3 normal;
    };
    std::vector<Pick> picks;             // manifolds in contact order
    std::vector<int> slot;               // (manifolds) place in `sweep`, by colour
    std::vector<uint32_t> bodyColours;   // (solver bodies) bit c: a manifold of colour c moves it
    int colourStart[kRelaxColours + 2] = {};   // manifolds of colour c: [colourStart[c], colourStart[c + 1]);
                                               //   colour kRelaxColours is the overflow
    std::vector<SoftContact> sweep;      // manifolds by colour, contiguous
    std::vector<SoftWideBlock> blocks;   // the soft step's: kSoftLanes manifolds of one colour each, by colour
    int blockStart[kRelaxColours + 1] = {};   // blocks of colour c: [blockStart[c], blockStart[c + 1])
    std::vector<int> order;              // one colour's manifolds, the open ones last
    std::vector<int> run, cluster;       // one shape pair's contacts; one manifold's before reduction
    std::vector<uint8_t> taken;
    std::vector<WarmImpulse> warm;       // the step's warm start written here, then swapped in
    std::vector<int> warmIndex;          // (potential contacts) index into State::warm, -1: none
    std::vector<SoftJoint> joints;       // (joints)
    std::vector<Vec3> pos;               // (bodies) poses within the step, for the joints' rows
    std::vector<Quat> rot;
};

// Whether a relaxation method handles this model and settings; otherwise *why is one line
// starting with `method` ("the soft step (--method soft)").
bool relaxStepSupports(const char* method, const Model& model, const WorldSettings& settings, std::string* why);

struct RelaxFrame {  // the step's constants every manifold is built with
    Real frictionScale;
    SoftParams moving, still;   // softness between two moving bodies, and against one that does not move
    const WarmImpulse* warm;
    int warmCount;
    Real warmScale;  // step impulses (State::warm) to the method's impulses (per substep)
};

// The solver's bodies: the active, non-static ones, velocities from the state, no motion yet.
void relaxPrepareBodies(const SoftStepInput& in, const State& state, SoftStepScratch& s);

// s.warmIndex: each potential contact's entry in frame.warm, -1: none.
void relaxWarmIndices(const SoftStepInput& in, const RelaxFrame& frame, SoftStepScratch& s);

// Potential contacts -> manifolds (at most kSoftMaxPoints each), coloured and built in s.sweep,
// contiguous per colour; result.manifolds, colours and overflow set.
void relaxGatherManifolds(const SoftStepInput& in, const State& state, SoftStepScratch& s, const RelaxFrame& frame,
                          SoftStepResult& result);

// The drag's point constraint at the step's start (SoftDrag), softness for the (sub)step h,
// warm-started from in.dragWarm / warmDivisor; result.dragEffectiveMass set.
SoftDrag relaxMakeDrag(const SoftStepInput& in, const State& state, const SoftStepScratch& s, Real h, int warmDivisor,
                       SoftStepResult& result);

// s.joints at the step's start (rows not built yet), warm-started from State::jointWarm / warmDivisor;
// s.pos, s.rot the poses at the step's start. Returns the joints' row count.
int relaxPrepareJoints(const SoftStepInput& in, const State& state, SoftStepScratch& s, int warmDivisor);

// The step's end: poses x0 + dp, dq q0, velocities, the drag's and the joints' impulses, the
// contacts (impulses over the step: the points' totalNormalImpulse, substeps x tangent impulses)
// and the warm start (substeps x the last impulses), and the residual.
void relaxStore(const SoftStepInput& in, State& state, SoftStepScratch& s, int substeps, const SoftDrag& drag,
                int jointRows, std::vector<Contact>& contacts, SoftStepResult& result);

// s.blocks from s.sweep (soft_wide.h): each colour's manifolds, not the overflow's, kSoftLanes
// at a time; s.blockStart set. The points' separations and impulses are copied.
void relaxBuildBlocks(SoftStepScratch& s);

// The blocks' separations and impulses back into s.sweep (for the store).
void relaxScatterBlocks(SoftStepScratch& s);

// One sweep over the blocks: each colour's blocks in a forEach (they share no moving body), then
// the overflow colour's manifolds serially with the scalar law. wide(block), scalar(m, i): i the
// manifold's index in s.sweep.
template <class Exec, class W, class F>
void sweepBlocks(Exec& ex, SoftStepScratch& s, const W& wide, const F& scalar) {
    SoftWideBlock* blocks = s.blocks.data();
    for (int c = 0; c < kRelaxColours; ++c) {
        const int begin = s.blockStart[c], n = s.blockStart[c + 1] - begin;
        if (n == 0) continue;
        SoftWideBlock* k = blocks + begin;
        // One item per manifold slot, the block solved by its first: the executor's threshold for
        // running a forEach in parallel (HostExecutor::kHostParallel) counts manifolds, as before
        // the blocks.
        ex.forEach(n * kSoftLanes, nullptr, nullptr, [=] CS_LAMBDA(int i) {
            if (i % kSoftLanes == 0) wide(k[i / kSoftLanes]);
        });
    }
    const int begin = s.colourStart[kRelaxColours], n = s.colourStart[kRelaxColours + 1] - begin;
    if (n == 0) return;
    SoftContact* m = s.sweep.data() + begin;
    ex.serial(nullptr, [=] CS_LAMBDA() {
        for (int i = 0; i < n; ++i) scalar(m[i], begin + i);
    });
}

}  // namespace cs
