// Entry points of the interactive sandbox and the headless recorder (issue 3).
//
// app/main.cpp dispatches `sandbox`, `sandbox gui [SCENE]` to runGui and `sandbox record ...` to
// runRecord; argv is as after the subcommand (argv[0] is the subcommand name or the program
// name, options start at argv[1]). Both return a process exit status and never throw: a missing
// display, GL below 3.3, a bad scene file or a missing ffmpeg give a one-line message.
#pragma once

namespace cs {

// Opens the GLFW window on SCENE (default scene when absent).
//   sandbox gui [SCENE] [--compare 'standard/pcr,standard/jacobi'] [--size WxH] [--headless]
//               [--script FILE] [--screenshot FILE] [--frames N] [--replay FILE]
//               [--session-out FILE] [settings as for run]
int runGui(int argc, char** argv);

// Renders SCENE offscreen (EGL surfaceless, no X server) into an MP4 through ffmpeg.
//   sandbox record SCENE --out FILE.mp4 [--seconds S] [--size WxH] [--fps F]
//                  [--compare 'standard/pcr,standard/jacobi'] [--replay FILE] [settings]
int runRecord(int argc, char** argv);

}  // namespace cs
