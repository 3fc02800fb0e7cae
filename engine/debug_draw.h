// Debug drawing: the only way the engine shows anything.
//
// Like Box2D's b2DebugDraw, a struct of callbacks plus flags and a context pointer. The engine
// walks the world and calls these; the app adapts them to its batched OpenGL renderer. The
// engine library links no OpenGL. Contact models add their own layers through the same calls.
#pragma once

#include "engine/core/math.h"

namespace cs {

struct Color {
    float r, g, b, a;
};

struct DebugDrawFlags {
    bool contactPoints = true;
    bool contactNormals = true;      // length scaled by the normal impulse
    bool contactForces = false;
    bool frictionCones = false;      // half-angle atan(mu), stick green / slip red
    bool penetration = true;         // contacts deeper than penetrationThreshold highlighted
    float penetrationThreshold = 1e-3f;   // m: solver-level overlaps below this are not flagged
    bool aabbs = false;
    bool bodyFrames = false;         // body frames and centres of mass
    bool jointFrames = true;
    bool dragSpring = true;
    bool constraintGroups = true;    // contact-model specific layers (PEG groups, PLUS phases)
    bool femRestShape = false;       // deformable bodies' rest shapes as wireframes
    bool femAnchors = true;          // pinned nodes, and attached nodes with a line to their body
    bool femContacts = true;         // the contact layers above for deformable bodies' node contacts
    float forceScale = 0.02f;        // metres per newton for force vectors
    float normalLength = 0.15f;      // metres for a unit-impulse normal
};

struct DebugDraw {
    void (*drawLine)(Vec3 a, Vec3 b, Color c, void* context) = nullptr;
    void (*drawPoint)(Vec3 p, float size, Color c, void* context) = nullptr;
    void (*drawTriangle)(Vec3 a, Vec3 b, Vec3 c, Color color, void* context) = nullptr;
    void (*drawText)(Vec3 p, const char* text, Color c, void* context) = nullptr;
    DebugDrawFlags flags;
    void* context = nullptr;
};

}  // namespace cs
