#version 330 core
// Soft lighting: a hemisphere ambient (sky above, ground bounce below), one directional key light
// with a hardware-filtered (2x2 PCF) shadow map lookup, a little specular, a world-space grid and a faint
// checker of 1 m tiles on static bodies' tops (scale and depth on the ground), distance haze into the
// sky's horizon colour, and the body's opacity as alpha (blended only in the see-through pass).
in vec3 vWorldPos;
in vec3 vNormal;
in vec4 vColor;
in vec4 vLightPos;

uniform vec3 uLightDir;      // towards the light, unit
uniform vec3 uCameraPos;
uniform sampler2DShadow uShadowMap;
uniform int uShadows;
uniform float uGridSpacing;
uniform vec3 uHorizon;     // the sky's colour at the horizon (sky_frag.glsl)

out vec4 fragColor;

float shadowFactor(vec3 n) {
    if (uShadows == 0) return 1.0;
    vec3 p = vLightPos.xyz / vLightPos.w * 0.5 + 0.5;
    if (p.x <= 0.0 || p.x >= 1.0 || p.y <= 0.0 || p.y >= 1.0 || p.z >= 1.0) return 1.0;
    float bias = max(0.0025 * (1.0 - dot(n, uLightDir)), 0.0008);
    // Hardware 2x2 percentage-closer filtering (compare mode, linear filter): one fetch.
    return texture(uShadowMap, vec3(p.xy, p.z - bias));
}

// Anti-aliased grid lines: distance to the nearest line in units of the pixel footprint w.
float gridLines(vec2 xy, vec2 w, float spacing) {
    vec2 g = xy / spacing;
    vec2 a = abs(fract(g - 0.5) - 0.5) * spacing / max(w, vec2(1e-6));
    return 1.0 - min(min(a.x, a.y), 1.0);
}

void main() {
    vec3 n = normalize(vNormal);
    if (!gl_FrontFacing) n = -n;
    vec3 base = vColor.rgb;
    bool isStatic = vColor.a > 1.5;   // a = opacity, plus 2 for a static body
    float opacity = isStatic ? vColor.a - 2.0 : vColor.a;
    if (isStatic && n.z > 0.5) {
        vec2 w = fwidth(vWorldPos.xy);
        float minor = gridLines(vWorldPos.xy, w, uGridSpacing);
        float major = gridLines(vWorldPos.xy, w, uGridSpacing * 10.0);
        // The checker fades out with the pixel footprint before it can alias.
        vec2 tile = floor(vWorldPos.xy / (uGridSpacing * 4.0));
        float checker = mod(tile.x + tile.y, 2.0) * (1.0 - clamp(max(w.x, w.y) / uGridSpacing, 0.0, 1.0));
        base *= 1.0 - 0.06 * checker;
        base = mix(base, base * 0.6, max(minor * 0.4, major * 0.8));
    }
    float sky = 0.5 + 0.5 * n.z;
    vec3 ambient = mix(vec3(0.22, 0.21, 0.20), vec3(0.42, 0.45, 0.50), sky);
    float diffuse = max(dot(n, uLightDir), 0.0) * shadowFactor(n);
    vec3 v = normalize(uCameraPos - vWorldPos);
    vec3 h = normalize(v + uLightDir);
    // The highlight's power 48 by multiplications (x^3, then squared four times): pow() is an
    // exp2 and a log2 per pixel on llvmpipe, the software rasterizer most CPU-only users get.
    float s = max(dot(n, h), 0.0);
    s = s * s * s;
    s *= s;
    s *= s;
    s *= s;
    s *= s;
    float spec = s * 0.25 * diffuse;
    vec3 c = base * (ambient * 1.08 + 0.8 * diffuse * vec3(1.0, 0.97, 0.92)) + vec3(spec);
    // Haze towards the horizon's colour: depth, and no aliasing of far grid lines.
    float fog = clamp((length(uCameraPos - vWorldPos) - 20.0) / 80.0, 0.0, 1.0);
    c = mix(c, uHorizon, fog * fog * (3.0 - 2.0 * fog));
    fragColor = vec4(c, opacity);
}
