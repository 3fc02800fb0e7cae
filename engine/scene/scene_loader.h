// Scene files: a documented JSON format (docs/scene-format.md) turned into a Model, the world
// settings and what the app needs to show the scene (name, description, camera, duration).
//
// One folder of scenes (assets/scenes/<name>.json) serves the app, the headless runner, the
// tests and the benchmarks, as Box2D's shared/benchmarks.h does. A scene is named either by its
// library name ("pyramid") or by a path to a .json file.
//
// The loader is strict: bad input gives ONE line naming the file and the problem and never
// crashes. Malformed JSON is reported as file:line:column; every other error names the file and
// the JSON path of the offending value (e.g. "/bodies/3/mass"); unknown fields are rejected, not
// ignored, so a misspelt "colour" or "frition" cannot silently fall back to a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/grasp/grasp_spec.h"
#include "engine/model.h"
#include "engine/world.h"

namespace cs {

struct SceneInfo {
    std::string name;                  // library name, or the file's stem when not given
    std::string description;           // one line, for `sandbox list` and the app's menu
    std::vector<std::string> notes;    // longer remarks (parameters, what to look for)
    std::string path;                  // the resolved .json file
    Vec3 cameraEye{Real(6), Real(-8), Real(4)};
    Vec3 cameraTarget{0, 0, Real(0.5)};
    Real cameraFovDeg = 45;
    Real duration = 5;                 // seconds: default length of a headless run or recording
    int emittedBodies = 0;             // bodies created by emitters (dormant until spawnTime)
    int generatedBodies = 0;           // bodies created by generators (pyramid, stack, ...)
    GraspSpec grasp;                   // the "grasp" block (engine/grasp/grasp_spec.h); empty if none
};

struct SceneLoadOptions {
    uint64_t seedOffset = 0;           // added to every random seed (emitters, random shapes)
};

// Limits of a scene (docs/scene-format.md, "Limits"). Within them a step takes bounded time and
// memory and every loop of the loader is bounded by its input's size; beyond them the loader
// names the limit in its one-line error. The command line holds its options to the same limits.
struct SceneLimits {
    static constexpr int jsonDepth = 64;           // nesting of arrays and objects in the file
    static constexpr int bodies = 25000;           // bodies, generated and emitted ones included (a 20,000-box pile)
    static constexpr int parts = 50000;            // convex parts (shapes) over all bodies
    static constexpr int joints = 10000;
    // Points of a hull, random or emitted polytope, and vertices of an OBJ part's hull: PhysX's
    // limit for a convex mesh (255 vertices). The narrow phase of two hulls costs about the
    // product of their sizes: two 1000-vertex hulls in contact took seconds per step.
    static constexpr int hullPoints = 255;
    static constexpr int objVertices = 100000;     // vertices of an OBJ file (its hull: hullPoints)
    static constexpr long long objBytes = 16 << 20;   // size of an OBJ file
    static constexpr int substeps = 1000;
    static constexpr int newton = 1000;            // Newton iterations per step
    static constexpr int iters = 10000;            // linear iterations per Newton iteration
    static constexpr int passes = 100;             // projection and redetection passes
    static constexpr double length = 1e6;          // m: |coordinate| of any position, point or extent
    // Pairs of parts (of different bodies, not both static) whose bounding boxes overlap where
    // they appear, counted when the two appear within spawnWindow s of each other (every body
    // present at t = 0; emitted bodies dropped faster than they fall apart): at most pairsPerPart
    // per part, or minPairs. A packed grid of boxes has 13 per part; bodies put in one spot
    // (N^2 / 2 deep overlaps, each a full narrow-phase test and a block of rows) exceed it.
    static constexpr int pairsPerPart = 16;
    static constexpr double spawnWindow = 0.1;
    static constexpr int minPairs = 10000;
    // Deformable bodies: a step's cost grows with the tets (each a block of 3 or 6 rows).
    static constexpr int femBodies = 100;
    static constexpr int femNodes = 100000;        // over all deformable bodies
    static constexpr int femTets = 200000;
    static constexpr int femCells = 100;           // box and beam cells along a side
    static constexpr int femResolution = 24;       // sphere, capsule and OBJ resolution
};

// A message with its control characters escaped (\n, \t, \xNN), so that it prints as one line.
std::string escapeControl(const std::string& message);

// Library folder: CS_SOURCE_DIR "/assets/scenes".
std::string sceneLibraryDir();

// Library scene names (file stems), sorted.
std::vector<std::string> listScenes();

// A library name -> its file; a path to an existing file -> that path. Empty when neither.
std::string resolveScene(const std::string& nameOrPath);

// Loads a scene into a fresh model (model and settings are overwritten; settings start from
// WorldSettings{} and take the scene's "settings" block). Returns false with a one-line *error.
bool loadScene(const std::string& pathOrName, Model& model, WorldSettings& settings,
               SceneInfo& info, std::string* error);
bool loadScene(const std::string& pathOrName, Model& model, WorldSettings& settings,
               SceneInfo& info, std::string* error, const SceneLoadOptions& options);

// Same, from JSON text; sourceName is used in messages and relative OBJ paths resolve against
// sourceDir.
bool loadSceneFromText(const std::string& text, const std::string& sourceName,
                       const std::string& sourceDir, Model& model, WorldSettings& settings,
                       SceneInfo& info, std::string* error, const SceneLoadOptions& options = {});

// Names used by scene files and the command line for the world's settings.
const char* contactModelName(ContactModelType type);      // "standard", "peg", "plus", "compliant"
bool parseContactModelName(const std::string& name, ContactModelType& out);
const char* ncpFunctionName(NcpFunction f);               // "fb", "min"
bool parseNcpFunctionName(const std::string& name, NcpFunction& out);
const char* solverTypeName(LinearSolverType type);        // "jacobi", "gs", "pcg", "pcr"
bool parseSolverTypeName(const std::string& name, LinearSolverType& out);

}  // namespace cs
