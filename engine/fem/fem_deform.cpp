// Hand-made deformations for reviewing and testing the FEM drawing (fem_deform.h).
#include "engine/fem/fem_deform.h"

#include <cmath>
#include <cstdlib>

namespace cs {

bool deformFemBodies(const Model& model, const std::string& spec, std::vector<Vec3>& femPos, std::string* error) {
    const size_t colon = spec.find(':');
    const std::string kind = spec.substr(0, colon);
    char* end = nullptr;
    const double amount = colon == std::string::npos ? NAN : std::strtod(spec.c_str() + colon + 1, &end);
    const bool known = kind == "stretch" || kind == "squeeze" || kind == "bend" || kind == "twist";
    if (!known || !std::isfinite(amount) || !end || *end != '\0' || ((kind == "stretch" || kind == "squeeze") && !(amount > 0)) ||
        std::fabs(amount) > 100) {
        if (error)
            *error = "--fem-deform: expected stretch:A or squeeze:A (A > 0), bend:K or twist:T (|K|, |T| <= 100), got \"" +
                     spec + "\"";
        return false;
    }
    const Real a = Real(amount);
    femPos = model.femRestPos;
    for (const FemBodyInfo& body : model.femBodies) {
        Vec3 lo = model.femRestPos[body.firstNode], hi = lo;
        for (int i = 0; i < body.nodeCount; ++i) {
            lo = vmin(lo, model.femRestPos[body.firstNode + i]);
            hi = vmax(hi, model.femRestPos[body.firstNode + i]);
        }
        const Vec3 c = Real(0.5) * (lo + hi), extent = hi - lo;
        const int axis = extent.x >= extent.y && extent.x >= extent.z ? 0 : extent.y >= extent.z ? 1 : 2;
        Vec3 u{0, 0, 0}, up{0, 0, 1};
        u[axis] = 1;
        if (axis == 2) up = Vec3{0, 1, 0};
        const Real L = extent[axis];
        for (int i = 0; i < body.nodeCount; ++i) {
            const Vec3 d = model.femRestPos[body.firstNode + i] - c;
            const Real s = dot(d, u), h = dot(d, up);
            Vec3& out = femPos[body.firstNode + i];
            if (kind == "stretch" || kind == "squeeze") {
                const Vec3 dir = kind == "stretch" ? u : up;
                const Real along = dot(d, dir);
                out = c + a * along * dir + std::pow(a, Real(-0.25)) * (d - along * dir);
            } else if (kind == "bend") {
                if (a == 0) continue;
                // From the body's -u end, which stays put (a clamped end stays clamped).
                const Real R = L / a, theta = (s + L / 2) / R;
                out = c - (L / 2) * u + (R - h) * std::sin(theta) * u + (R - (R - h) * std::cos(theta)) * up +
                      (d - s * u - h * up);
            } else {
                const Real angle = a * s / L;
                const Vec3 r = d - s * u;   // the part off the axis, turned about u
                out = c + s * u + std::cos(angle) * r + std::sin(angle) * cross(u, r);
            }
        }
    }
    return true;
}

}  // namespace cs
