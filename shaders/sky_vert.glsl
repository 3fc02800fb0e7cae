#version 330 core
// One triangle over the whole viewport, at the far plane (the sky behind everything).
out vec2 vNdc;
void main() {
    vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
    vNdc = p;
    gl_Position = vec4(p, 1.0, 1.0);
}
