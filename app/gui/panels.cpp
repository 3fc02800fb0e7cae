// The ImGui windows, part 1: the settings panel (left) and the selected body; see sandbox_app.h.
// The panel's Show section and its footer are in panels_show.cpp; the comparison table, plots,
// help, legend and viewport labels in panels_views.cpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "app/gui/panel_style.h"
#include "app/gui/sandbox_app.h"
#include "engine/contact/contact_model.h"
#include "engine/solver/soft_step.h"
#include "render/plot_widget.h"

namespace cs {

namespace {

const ContactModelType kModels[] = {ContactModelType::Standard, ContactModelType::PEG, ContactModelType::PLUS,
                                    ContactModelType::Compliant, ContactModelType::CCP};
const LinearSolverType kSolvers[] = {LinearSolverType::Jacobi, LinearSolverType::GaussSeidel,
                                     LinearSolverType::PCG, LinearSolverType::PCR};
const char* kSolverLabels[] = {"Jacobi", "Gauss-Seidel", "PCG", "PCR"};

// Combo of the contact models; those not built yet are shown greyed with the reason.
bool contactModelCombo(const char* label, ContactModelType& model) {
    bool changed = false;
    if (ImGui::BeginCombo(label, contactModelName(model))) {
        for (ContactModelType t : kModels) {
            std::string why;
            bool available = contactModelAvailable(t, &why);
            if (ImGui::Selectable(contactModelName(t), t == model,
                                  available ? 0 : ImGuiSelectableFlags_Disabled)) {
                model = t;
                changed = true;
            }
            if (!available && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) wrappedTooltip(why.c_str());
        }
        ImGui::EndCombo();
    }
    return changed;
}

// Whether a copy can run `method`; otherwise *why is one line. The soft step says what it handles
// (softStepSupports); another relaxation method is taken to solve the standard model's rigid
// contacts as the soft step does (issue 38 asks both of them for that model).
bool solveMethodAvailable(SolveMethod method, const Model& model, const WorldSettings& settings, std::string* why) {
    if (method == SolveMethod::Newton) return true;
    WorldSettings s = settings;
    s.solver.method = method;
    if (method == SolveMethod::Soft) return softStepSupports(model, s, why);
    if (settings.solver.contactModel == ContactModelType::Standard) return true;
    *why = std::string(solveMethodName(method)) + " solves the standard contact model only";
    return false;
}

// Combo of the solve methods (solveMethods(): every SolveMethod the engine names); those the copy
// cannot run are greyed with the reason.
bool solveMethodCombo(const char* label, SolveMethod& method, const Model& model, const WorldSettings& settings) {
    bool changed = false;
    if (ImGui::BeginCombo(label, solveMethodName(method))) {
        for (SolveMethod m : solveMethods()) {
            std::string why;
            const bool available = solveMethodAvailable(m, model, settings, &why);
            if (ImGui::Selectable(solveMethodName(m), m == method, available ? 0 : ImGuiSelectableFlags_Disabled)) {
                method = m;
                changed = true;
            }
            if (!available && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) wrappedTooltip(why.c_str());
        }
        ImGui::EndCombo();
    }
    return changed;
}

}  // namespace

void SandboxApp::drawPanels() {
    helpMarkers() = HelpMarkers{};
    uiRects_.clear();
    noteFemContactModel();
    if (view.settingsPanel) drawSettingsPanel();
    if (grasp_.active() && view.grasp) drawGraspWindow();   // before the selection: it is placed by it
    if ((selectedBody >= 0 || selectedFemBody >= 0) && view.settingsPanel) drawSelectionPanel();
    if (copyCount() > 1) drawComparisonTable();
    if (view.plots) drawPlotsWindow();
    if (view.help) drawHelpWindow();
    if (view.legend) drawLegend();
    if (view.legend) drawFemLegend();
    if (view.impact) drawImpactWindow();
}

// PEG and PLUS leave a deformable body's contacts to the standard model: the status line says so
// when a copy starts running one of them on such a scene (the world also prints it to stderr).
void SandboxApp::noteFemContactModel() {
    std::string note;
    for (auto& c : copies_)
        if (note.empty()) note = femContactModelNote(c->world.model(), c->world.settings.solver.contactModel);
    if (!note.empty() && note != femNoteShown_) status = note;
    femNoteShown_ = note;
}

// The left panel: the settings scroll (they fit at 1280x720 with the rarely used ones folded),
// and a footer pinned under them holds the capture buttons, the capture path and the status
// line, so those are never below the fold.
void SandboxApp::drawSettingsPanel() {
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(panelWidth_, float(fbHeight_)));
    // An opaque panel: the GUI test looks for its exact colour.
    ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.10f, 0.105f, 0.115f, 1.f));
    ImGui::PushStyleVar(ImGuiStyleVar_FramePadding, ImVec2(4, 2));
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(6, 3));
    // The title bar holds the frame rate, the step's wall time and the real-time factor; it must
    // fit the 340 px panel whole ("Contact Sandbox" before them cut the factor to "0.0", and the
    // window's own title bar already names the app).
    char title[128];
    std::snprintf(title, sizeof title, "%.0f fps   %.1f ms/step   %.2gx real time###settings", fps, stepWallMs_,
                  paused ? 0.0 : realTimeFactor());
    ImGui::Begin(title, nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse);
    ImGui::PopStyleColor();
    ImGui::BeginChild("settings", ImVec2(0, -footerHeight()));
    ImGui::PushItemWidth(-140);
    drawSettingsContent();
    ImGui::PopItemWidth();
    settingsContentHeight_ = ImGui::GetCursorPosY();
    settingsAreaHeight_ = ImGui::GetWindowHeight();
    ImGui::EndChild();
    drawFooter();
    ImVec2 p = ImGui::GetWindowPos(), sz = ImGui::GetWindowSize();
    uiRects_["settings"] = UiRect{p.x, p.y, sz.x, sz.y};
    ImGui::End();
    ImGui::PopStyleVar(2);
}

void SandboxApp::drawSettingsContent() {
    // ---- scene ----
    if (ImGui::BeginCombo("scene", sceneInfo_.name.c_str())) {
        for (const std::string& name : sceneList_) {
            if (ImGui::Selectable(name.c_str(), name == sceneInfo_.name)) {
                std::vector<CopySpec> specs;
                if (copyCount() > 1)
                    for (auto& c : copies_) specs.push_back(c->spec);
                std::string error;
                if (loadScene(name, &error)) {
                    setCopies(specs);
                    status = "loaded " + name;
                } else {
                    status = error;
                }
            }
        }
        ImGui::EndCombo();
    }
    if (!sceneInfo_.description.empty()) helpMarker(sceneInfo_.description.c_str());

    // ---- simulation controls ----
    if (ImGui::Button(paused ? "Play (space)" : "Pause (space)")) paused = !paused;
    ImGui::SameLine();
    if (ImGui::Button("Step")) {
        paused = true;
        stepOnce = true;
    }
    ImGui::SameLine();
    if (ImGui::Button("Reset (R)")) {
        graspStop();
        SessionEvent e;
        e.type = SessionEventType::Reset;
        applyEvent(e, true);
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    ImGui::SliderFloat("##speed", &speed, 1.f / 32.f, 8.f, "speed %.3gx", ImGuiSliderFlags_Logarithmic);
    if (!copies_.empty())
        ImGui::Text("t = %.3f s   step %lld   bodies %d (%d asleep)", double(copies_[0]->world.state().time),
                    stepsSinceReset(), copies_[0]->world.model().bodyCount(), copies_[0]->world.sleepingBodies());

    // ---- solver, per copy ----
    if (ImGui::CollapsingHeader("Solver", ImGuiTreeNodeFlags_DefaultOpen)) {
        bool tabs = copyCount() > 1 && ImGui::BeginTabBar("copies");
        for (int i = 0; i < copyCount(); ++i) {
            if (tabs && !ImGui::BeginTabItem((std::to_string(i + 1) + ": " + copies_[i]->label).c_str())) continue;
            ImGui::PushID(i);
            SolverSettings& s = copies_[i]->world.settings.solver;
            contactModelCombo("contact model", s.contactModel);
            const std::string femNote = femContactModelNote(copies_[i]->world.model(), s.contactModel);
            if (!femNote.empty()) {   // the tooltip: femContactModelNote's whole sentence
                ImGui::TextColored(ImVec4(1.f, 0.75f, 0.3f, 1.f), "deformable bodies: standard model");
                if (ImGui::IsItemHovered()) wrappedTooltip(femNote.c_str());
            }
            if (s.contactModel == ContactModelType::CCP) {   // [CCP] solvers (engine/solver/ccp_solvers.h)
                int ccp = int(s.ccp.solver);
                ImGui::Combo("CCP solver", &ccp, "projected Jacobi\0projected Gauss-Seidel\0APGD\0Newton (linear solver below)\0");
                s.ccp.solver = CcpSolverType(ccp);
                ImGui::SliderInt("CCP iterations", &s.ccp.iterations, 1, 1000, "%d", ImGuiSliderFlags_Logarithmic);
                helpMarker("[CCP] eq. 5d: the normal condition relaxed by -mu |v_T|, a convex QP with cone constraints. "
                           "Sliding contacts end each step apart by h mu |v_T| (drawn magenta, the largest labelled).");
            }
            ImGui::Checkbox("hyperplane faces", &copies_[i]->world.settings.hyperplaneFaces);
            helpMarker("The contacts the [PEG] paper's standard model uses: a vertex is paired with every face "
                       "within the margin, enforced on the face's plane, with no applicability test. Shows the "
                       "SM traps of [PEG] figures 2-3 (a body caught beside an edge it does not touch).");
            // The solve method (issue 38): Newton, or a relaxation method over the same contacts.
            const Model& model = copies_[i]->world.model();
            solveMethodCombo("solve method", s.method, model, copies_[i]->world.settings);
            helpMarker("newton: the non-smooth Newton method ([NSN]) with the linear solver below. soft: Box2D v3's "
                       "soft step, substeps with soft contacts and relax sweeps, no Newton iterations "
                       "(docs/relaxation.md). The compare view runs each copy with its own method.");
            std::string why;
            if (s.method != SolveMethod::Newton && !solveMethodAvailable(s.method, model, copies_[i]->world.settings, &why)) {
                ImGui::TextColored(ImVec4(1.f, 0.75f, 0.3f, 1.f), "runs Newton here");
                if (ImGui::IsItemHovered()) wrappedTooltip(why.c_str());
            }
            // Newton's own settings mean nothing to another method: shown greyed, the tooltip says why.
            const bool newtonOnly = s.method != SolveMethod::Newton && why.empty();
            const std::string newtonWhy = std::string("Newton's setting: the ") + solveMethodName(s.method) +
                                          " method has no Newton iterations and no linear solver";
            auto newtonTip = [&] {
                if (newtonOnly && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                    wrappedTooltip(newtonWhy.c_str());
            };
            ImGui::BeginDisabled(newtonOnly);
            int ncp = int(s.ncp);
            ImGui::Combo("NCP function", &ncp, "Fischer-Burmeister\0minimum map\0");
            newtonTip();
            s.ncp = NcpFunction(ncp);
            int solver = 0;
            while (solver < 3 && kSolvers[solver] != s.linearSolver) ++solver;
            ImGui::Combo("linear solver", &solver, kSolverLabels, 4);
            newtonTip();
            s.linearSolver = kSolvers[solver];
            ImGui::SliderInt("Newton iterations", &s.newtonIterations, 1, 50);
            newtonTip();
            ImGui::SliderInt("linear iterations", &s.linearIterations, 1, 200);
            newtonTip();
            ImGui::EndDisabled();
            ImGui::Checkbox("warm start", &s.warmStart);   // every method starts from the last step's impulses
            ImGui::SameLine();
            ImGui::BeginDisabled(newtonOnly);
            ImGui::Checkbox("compl. precond.", &s.complementarityPreconditioner);
            newtonTip();
            ImGui::EndDisabled();
            helpMarker("[NSN] section 7: complementarity preconditioning r = h [J M^-1 J^T]_ii");
            ImGui::PopID();
            if (tabs) ImGui::EndTabItem();
        }
        if (tabs) ImGui::EndTabBar();
        // Copies: 1 to 4 side by side, each with its own model and solver.
        ImGui::Text("copies: %d", copyCount());
        ImGui::SameLine();
        if (copyCount() < 4 && ImGui::SmallButton("+ copy")) {
            std::vector<CopySpec> specs;
            for (auto& c : copies_) specs.push_back(c->spec);
            CopySpec next = specs.back();
            next.solver = kSolvers[(int(next.solver) + 3) % 4];
            specs.push_back(next);
            setCopies(specs);
        }
        if (copyCount() > 1) ImGui::SameLine();
        if (copyCount() > 1 && ImGui::SmallButton("- copy")) {
            std::vector<CopySpec> specs;
            for (int i = 0; i + 1 < copyCount(); ++i) specs.push_back(copies_[i]->spec);
            setCopies(specs.size() > 1 ? specs : std::vector<CopySpec>{specs[0]});
        }
    }

    // ---- world: shared by every copy (they step in lockstep) ----
    if (!copies_.empty() && ImGui::CollapsingHeader("World", ImGuiTreeNodeFlags_DefaultOpen)) {
        WorldSettings w = copies_[0]->world.settings;
        float hz = float(1.0 / w.dt);
        bool changed = ImGui::SliderFloat("step rate (Hz)", &hz, 30.f, 2000.f, "%.0f", ImGuiSliderFlags_Logarithmic);
        changed |= ImGui::SliderInt("substeps", &w.substeps, 1, 16);
        float friction = float(w.frictionScale);
        changed |= ImGui::SliderFloat("friction scale", &friction, 0.f, 2.f);
        float g[3] = {float(w.gravity.x), float(w.gravity.y), float(w.gravity.z)};
        changed |= ImGui::DragFloat3("gravity", g, 0.05f, -30.f, 30.f, "%.2f");
        changed |= ImGui::Checkbox("sleeping", &w.sleeping);
        helpMarker("Islands at rest sleep: bodies below 0.05 m/s and 2 deg/s for 0.5 s, drawn darker and "
                   "bluish, are left out of the step until an awake body touches them, the mouse drags "
                   "them or a joint drive moves (standard, PEG and CCP models; scenes with no deformable "
                   "body). Off in the command-line runs.");
        float speculative = float(w.speculative);
        if (ImGui::TreeNode("contact passes")) {
            changed |= ImGui::SliderFloat("speculative", &speculative, 0.f, 2.f, "%.2f");
            helpMarker("Speculative contacts: the narrow phase widens each pair's margin, face regions and "
                       "applicability by this times the pair's motion within the step (0: fixed). Needed at "
                       "large steps; the GPU backend runs such worlds on the CPU.");
            changed |= ImGui::SliderInt("projection passes", &w.projectionPasses, 0, 4);
            helpMarker("Position projection after each step: overlaps the step left (a turning face moves "
                       "its plane by a second-order term the linearized gap leaves out) are moved apart by "
                       "the contact model's own constraints, without changing velocities (0: off). The GPU "
                       "backend runs such worlds on the CPU.");
            changed |= ImGui::SliderInt("redetect passes", &w.redetectPasses, 0, 3);
            helpMarker("With speculative contacts (standard and PEG models): when the solve moves or turns a "
                       "body farther than the narrow phase allowed for, detect again widened by the solved "
                       "velocities and solve again, at most this many times (0: off). A body landing on one "
                       "corner at a large step then gets the vertices its turn swings down.");
            ImGui::TreePop();
        }
        if (changed) {
            for (auto& c : copies_) {
                WorldSettings& s = c->world.settings;
                s.dt = Real(1.0 / hz);
                s.substeps = w.substeps;
                s.frictionScale = Real(friction);
                s.gravity = Vec3{Real(g[0]), Real(g[1]), Real(g[2])};
                s.speculative = Real(speculative);
                s.projectionPasses = w.projectionPasses;
                s.redetectPasses = w.redetectPasses;
                s.sleeping = w.sleeping;
            }
        }
        if (ImGui::TreeNode("mouse drag")) {
            DragSettings d = copies_[0]->world.dragSettings;
            float f = float(d.frequencyHz), z = float(d.dampingRatio), fmax = float(d.maxForce);
            bool dragChanged = ImGui::SliderFloat("frequency (Hz)", &f, 0.5f, 20.f, "%.1f");
            dragChanged |= ImGui::SliderFloat("damping ratio", &z, 0.f, 2.f, "%.2f");
            dragChanged |= ImGui::SliderFloat("force limit (N)", &fmax, 1.f, 1e5f, "%.0f", ImGuiSliderFlags_Logarithmic);
            helpMarker("The drag is a spring to the cursor whose stiffness scales with the effective mass at the "
                       "grabbed point; the limit bounds the magnitude of its force (and so the torque of a "
                       "shift-drag, limit x lever). A body heavier than limit / g cannot be lifted.");
            if (dragChanged)
                for (auto& c : copies_) c->world.dragSettings = DragSettings{Real(f), Real(z), Real(fmax)};
            ImGui::TreePop();
        }
    }
    drawShowSection();
    drawFemSection();
}

void SandboxApp::drawSelectionPanel() {
    if (copies_.empty()) return;
    const World& w = copies_[std::min(dragViewport_, copyCount() - 1)]->world;
    const Model& m = w.model();
    const bool fem = selectedFemBody >= 0 && selectedFemBody < (int)m.femBodies.size();
    if (!fem && (selectedBody < 0 || selectedBody >= m.bodyCount())) return;
    // Where the grasp's window has a column, at its foot (drawGraspWindow leaves the room);
    // beside a floating Grasp window, left of it; else the view's top right corner.
    const auto grasp = uiRects_.find("grasp");
    if (graspWidth_ > 0) {
        const ImVec2 bottomLeft(viewRight(), float(fbHeight_) - tableHeight());
        ImGui::SetNextWindowPos(bottomLeft, ImGuiCond_Always, ImVec2(0.f, 1.f));
        ImGui::SetNextWindowSize(ImVec2(graspWidth_, 0.f));
    } else {
        const float right = grasp != uiRects_.end() ? grasp->second.x - 8.f : viewRight() - 10.f;
        const float left = std::max(right - 280.f, view.settingsPanel ? panelWidth_ : 0.f);
        ImGui::SetNextWindowPos(ImVec2(left, 10.f), ImGuiCond_Always);
        ImGui::SetNextWindowSize(ImVec2(280.f, 0.f));
    }
    ImGui::SetNextWindowBgAlpha(0.85f);
    ImGui::Begin("Selected body", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
    const ImVec2 wp = ImGui::GetWindowPos(), wsz = ImGui::GetWindowSize();
    uiRects_["selection"] = UiRect{wp.x, wp.y, wsz.x, wsz.y};
    selectionHeight_ = wsz.y;
    if (fem) {
        drawFemSelection(w, selectedFemBody);
        ImGui::End();
        return;
    }
    const int b = selectedBody;
    ImGui::Text("%s (#%d)%s", m.bodyName[b].c_str(), b, m.isStatic(b) ? "  static" : "");
    const State& s = w.state();
    ImGui::Text("mass      %.4g kg", double(m.mass[b]));
    ImGui::Text("position  %.3f %.3f %.3f", double(s.pos[b].x), double(s.pos[b].y), double(s.pos[b].z));
    ImGui::Text("velocity  %.3f %.3f %.3f  |v| %.3f m/s", double(s.linVel[b].x), double(s.linVel[b].y),
                double(s.linVel[b].z), double(length(s.linVel[b])));
    ImGui::Text("ang. vel. %.3f %.3f %.3f rad/s", double(s.angVel[b].x), double(s.angVel[b].y), double(s.angVel[b].z));
    // Contacts on this body and their total force (impulse over the substep).
    Real h = w.settings.dt / std::max(1, w.settings.substeps);
    int count = 0;
    Vec3 force{0, 0, 0};
    for (const Contact& c : w.contacts()) {
        Real sign = c.geometry.bodyA == b ? Real(1) : c.geometry.bodyB == b ? Real(-1) : Real(0);
        if (sign == 0) continue;
        ++count;
        Vec3 impulse = c.normalImpulse * c.geometry.normal + c.tangentImpulse[0] * c.tangent[0] +
                       c.tangentImpulse[1] * c.tangent[1];
        force += (sign / h) * impulse;
    }
    ImGui::Text("contacts  %d, force %.2f %.2f %.2f N", count, double(force.x), double(force.y), double(force.z));
    const DragState& d = w.drag();
    if (d.body == b) {
        ImGui::Separator();
        ImGui::Text("drag force %.2f N (limit %.0f N)", double(length(d.force)), double(w.dragSettings.maxForce));
        ImGui::Text("effective mass %.4g kg", double(d.effectiveMass));
    }
    if (ImGui::Button(camera.followBody == b ? "Stop following (C)" : "Follow (C)")) {
        if (camera.followBody != b) camera.followBody = camera.followFem = -1;   // from another body to this one
        toggleFollow();
    }
    ImGui::End();
}

void SandboxApp::scriptSetMethod(const std::string& name, int copy, int frame) {
    SolveMethod method;
    if (!parseSolveMethodName(name, method)) {
        std::printf("method: unknown solve method '%s'\n", name.c_str());
        return;
    }
    for (int i = 0; i < copyCount(); ++i) {
        if (copy >= 0 && i != copy) continue;
        std::string why;
        if (!solveMethodAvailable(method, copies_[i]->world.model(), copies_[i]->world.settings, &why)) {
            std::printf("method: copy %d: %s\n", i, why.c_str());
            continue;
        }
        copies_[i]->world.settings.solver.method = method;
        std::printf("method: frame %d copy %d -> %s\n", frame, i, solveMethodName(method));
    }
    // Logged now, at this step, as a replay applies it: the frame's steps come before the panel
    // would log it, and they must run under the new method in both.
    logSettingsChanges();
}

void SandboxApp::printMethodReport(int frame) const {
    const auto now = std::chrono::steady_clock::now();
    const double busyMs = physicsBusyMs_.load(std::memory_order_relaxed);
    const double wallMs = std::chrono::duration<double, std::milli>(now - reportWall_).count();
    const double busy = reportWall_.time_since_epoch().count() == 0 ? 0.0 : (busyMs - reportBusyMs_) / wallMs;
    reportWall_ = now;
    reportBusyMs_ = busyMs;
    const double dropped = droppedSim_ - reportDroppedSim_;
    reportDroppedSim_ = droppedSim_;
    for (int i = 0; i < copyCount(); ++i) {
        const World& w = copies_[i]->world;
        const Model& m = w.model();
        int top = -1;   // the body that started highest: the top box of a pyramid
        for (int b = 0; b < m.bodyCount(); ++b)
            if (!m.isStatic(b) && (top < 0 || m.initialPos[b].z > m.initialPos[top].z)) top = b;
        const double drift = top >= 0 ? double(length(w.state().pos[top] - m.initialPos[top])) : 0.0;
        std::string label = copies_[i]->label;
        std::replace(label.begin(), label.end(), ' ', '_');
        std::printf("method-report frame=%d copy=%d label=%s method=%s time=%.4f newton_iters=%d linear_iters=%d "
                    "top_drift=%.3e title=%.3f busy=%.3f dropped=%.4f\n",
                    frame, i, label.c_str(), solveMethodName(w.settings.solver.method), double(w.state().time),
                    w.solveStats().newtonIterations, w.solveStats().linearIterations, drift,
                    paused ? 0.0 : realTimeFactor(), busy, dropped);
    }
}

}  // namespace cs
