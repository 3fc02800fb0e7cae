// Pixel facts of a screenshot, for the GUI smoke test (scripts/gui_test.sh).
//
//   cs_png_check FILE.png [--count NAME R G B TOL]... [--saturated MIN_SAT]
// prints, per named colour, how many pixels lie within TOL (max channel difference) of it, and
// with --saturated the number of pixels whose HSV saturation is at least MIN_SAT and whose value
// is above 0.15 (shaded, coloured bodies; the background, the grid and the UI are grey). The
// script decides what counts are enough.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <stb_image.h>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: cs_png_check FILE.png [--count NAME R G B TOL]... [--saturated MIN]\n");
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
    if (!px) {
        std::fprintf(stderr, "cs_png_check: cannot read %s\n", argv[1]);
        return 2;
    }
    std::printf("size %d %d\n", w, h);
    for (int i = 2; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--count") && i + 5 < argc) {
            const char* name = argv[i + 1];
            int r = std::atoi(argv[i + 2]), g = std::atoi(argv[i + 3]), b = std::atoi(argv[i + 4]);
            int tol = std::atoi(argv[i + 5]);
            long count = 0;
            for (long k = 0; k < long(w) * h; ++k) {
                const unsigned char* p = px + 3 * k;
                if (std::abs(p[0] - r) <= tol && std::abs(p[1] - g) <= tol && std::abs(p[2] - b) <= tol) ++count;
            }
            std::printf("count %s %ld\n", name, count);
            i += 5;
        } else if (!std::strcmp(argv[i], "--saturated") && i + 1 < argc) {
            float minSat = (float)std::atof(argv[i + 1]);
            long count = 0;
            for (long k = 0; k < long(w) * h; ++k) {
                const unsigned char* p = px + 3 * k;
                int mx = std::max({p[0], p[1], p[2]}), mn = std::min({p[0], p[1], p[2]});
                if (mx > 38 && float(mx - mn) / float(mx) >= minSat) ++count;
            }
            std::printf("saturated %ld\n", count);
            i += 1;
        }
    }
    stbi_image_free(px);
    return 0;
}
