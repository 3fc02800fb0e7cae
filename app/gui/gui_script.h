// Scripted input for reproducible GUI tests and screenshots (`sandbox gui --script FILE`).
//
// One command per line, "FRAME COMMAND ARGS", run before frame FRAME is stepped and drawn;
// '#' starts a comment. Pixels are window coordinates from the top-left.
//   cursor X Y            put the cursor at (X, Y)
//   move X Y N            move the cursor to (X, Y) over N frames
//   moveby DX DY N        move the cursor by (DX, DY) over N frames
//   aim auto|BODY [DX DY] put the cursor over a body's centre (auto: the highest dynamic body
//                         whose centre is visible in the first viewport; fem: the highest
//                         deformable body's node centroid), offset by (DX, DY)
//   press left|right [shift]   /   release left|right
//   wheel N               N notches of the mouse wheel at the cursor (> 0 zooms in)
//   key NAME              space, right, plus, minus, or a letter (r, b, n, f, c, g, h, m, p, ...)
//   show LAYER on|off     contacts, normals, cones, forces, penetration, aabbs, frames, joints,
//                         legend, plots, help, shadows, xray, impact, grasp; deformable bodies:
//                         strain (the strain colours), rest (rest-shape wireframe), anchors;
//                         settings (the left panel)
//   camera YAW PITCH DIST [TX TY TZ]   degrees and metres
//   report                print the drag state: grabbed point, target, force
//   ui report             print the layout: window rectangles, the settings panel's fit, the last
//                         tooltip, the legend, the step counter, the camera against the floor
//   hover help N          put the cursor over the N-th "(?)" marker drawn last frame
//   screenshot FILE       PNG of this frame, UI included
//   impact index N|end    the PLUS impact replay (show impact on): replay index 0..N
//   impact step|back      one interval forward / back (pauses the simulation)
//   impact frame          camera onto the impact
//   impact pause on|off   pause the simulation when an impact is captured (default on)
//   impact plot impulse normal|tangential, impact plot velocity tangential|normal
//   impact report         print "impact-report rounds=R intervals=N index=I ..." (impact_replay.h)
//   grasp play|stop       play the scene's grasp script from a reset / hand the control back
//   grasp grip G | force N | wrist X Y Z   the user's grasp goal (grasp_ui.h; the command ramps to it)
//   grasp report          print "grasp-report frame=F copy=I ... wrist=X,Y,Z (the applied target) goal=X,Y,Z
//                         rise=R grip=... normal=... sliding=... pad=stick|slide|other|free,... other=N,..."
//                         per copy (grasp_panel.cpp)
//   fem field volumetric|vonmises|stretch   the deformable bodies' strain colour field
//   fem range auto|LO HI  its colour range
//   fem pressure PA [BODY]   the chambers' pressure of deformable body BODY (default 0), as the
//                         Deformables panel's slider sets it
//   method NAME [COPY]    the solve method (newton, soft, ...) of copy COPY (1-based; default every
//                         copy), as the Solver panel's "solve method" combo sets it
//   method report         print "method-report frame=F copy=I label=... method=M time=T newton_iters=N
//                         linear_iters=L top_drift=D" per copy (D: how far the highest body moved, m)
//   quit
#pragma once

#include <string>
#include <vector>

namespace cs {

class SandboxApp;

struct ScriptCommand {
    int frame = 0;
    std::string verb;
    std::vector<std::string> args;
    int line = 0;
};

class GuiScript {
public:
    bool load(const std::string& path, std::string* error);
    // Runs the commands due at this frame (and continues cursor moves in progress).
    void run(int frame, SandboxApp& app);
    bool done(int frame) const;

private:
    std::vector<ScriptCommand> commands_;
    size_t next_ = 0;
    // A cursor move in progress.
    int moveFrom_ = 0, moveTo_ = 0;
    double fromX_ = 0, fromY_ = 0, toX_ = 0, toY_ = 0, curX_ = 0, curY_ = 0;
};

}  // namespace cs
