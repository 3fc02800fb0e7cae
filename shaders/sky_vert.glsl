#version 330 core
// One triangle over the whole viewport, at the far plane (the sky behind everything). The view
// ray (far point minus near point) is computed here, at the corners, and interpolated: for a
// perspective or orthographic camera both points are affine in the screen position, so the
// interpolated ray is exact, and each of the viewport's pixels is spared two matrix products
// (llvmpipe, box_on_plane paused at 1280x720: 23.1 -> 19.4 ms of CPU a frame, docs/speed.md).
uniform mat4 uInvViewProj;
out vec3 vRay;
void main() {
    vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
    vec4 a = uInvViewProj * vec4(p, -1.0, 1.0);
    vec4 b = uInvViewProj * vec4(p, 1.0, 1.0);
    vRay = b.xyz / b.w - a.xyz / a.w;
    gl_Position = vec4(p, 1.0, 1.0);
}
