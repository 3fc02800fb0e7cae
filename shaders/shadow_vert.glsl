#version 330 core
// Depth-only pass from the key light, same instance layout as mesh_vert.
layout(location = 0) in vec3 aPos;
layout(location = 2) in vec4 aRow0;
layout(location = 3) in vec4 aRow1;
layout(location = 4) in vec4 aRow2;
uniform mat4 uLightViewProj;
void main() {
    mat4 model = transpose(mat4(aRow0, aRow1, aRow2, vec4(0.0, 0.0, 0.0, 1.0)));
    gl_Position = uLightViewProj * (model * vec4(aPos, 1.0));
}
