#version 330 core
// Debug-draw lines, triangles and points: world position, RGBA colour, and a point size in pixels.
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec4 aColor;
layout(location = 2) in float aSize;
uniform mat4 uViewProj;
out vec4 vColor;
void main() {
    vColor = aColor;
    gl_Position = uViewProj * vec4(aPos, 1.0);
    // Pull overlays slightly towards the camera so they win against the faces they lie on.
    gl_Position.z -= 0.0004 * gl_Position.w;
    gl_PointSize = aSize;
}
