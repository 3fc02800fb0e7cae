#version 330 core
in vec4 vColor;
uniform int uRoundPoints;
out vec4 fragColor;
void main() {
    if (uRoundPoints != 0) {
        vec2 d = gl_PointCoord * 2.0 - 1.0;
        if (dot(d, d) > 1.0) discard;
    }
    fragColor = vColor;
}
