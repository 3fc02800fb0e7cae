#version 330 core
// The background: a sky graded by the view ray's elevation, from the horizon's haze (the colour the
// ground fades into, mesh_frag's fog) to a deeper blue overhead, and the same haze below the
// horizon, so the ground's far edge melts into it instead of ending in a line.
in vec3 vRay;   // the view ray, interpolated (sky_vert.glsl)
uniform vec3 uHorizon;
uniform vec3 uZenith;
out vec4 fragColor;
void main() {
    float up = clamp(vRay.z * inversesqrt(dot(vRay, vRay)), 0.0, 1.0);
    vec3 c = mix(uHorizon, uZenith, pow(up, 0.6));
    fragColor = vec4(c, 1.0);
}
