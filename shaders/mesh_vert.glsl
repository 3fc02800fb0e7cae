#version 330 core
// Instanced body shading: one mesh, many instances. Each instance carries its model matrix as
// three rows of a 3x4 affine transform (shape-local to world) and an RGBA colour; alpha is the
// opacity, plus 2 for a static body (drawn with the world grid on it).
layout(location = 0) in vec3 aPos;
layout(location = 1) in vec3 aNormal;
layout(location = 2) in vec4 aRow0;
layout(location = 3) in vec4 aRow1;
layout(location = 4) in vec4 aRow2;
layout(location = 5) in vec4 aColor;

uniform mat4 uViewProj;
uniform mat4 uLightViewProj;

out vec3 vWorldPos;
out vec3 vNormal;
out vec4 vColor;
out vec4 vLightPos;

void main() {
    mat4 model = transpose(mat4(aRow0, aRow1, aRow2, vec4(0.0, 0.0, 0.0, 1.0)));
    vec4 world = model * vec4(aPos, 1.0);
    vWorldPos = world.xyz;
    // Rigid transforms scaled uniformly (spheres): the normal matrix is the rotation part.
    vNormal = normalize(mat3(model) * aNormal);
    vColor = aColor;
    vLightPos = uLightViewProj * world;
    gl_Position = uViewProj * world;
}
