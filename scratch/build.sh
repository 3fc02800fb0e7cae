#!/bin/sh
cd /work/wt/femfix && g++ -O2 -std=c++20 -I. -I/usr/include/eigen3 -DCS_SOURCE_DIR=\"/work/wt/femfix\" scratch/$1.cpp build/libcs_engine.a -ltet $(pkg-config --libs qhull_r 2>/dev/null || echo -lqhull_r) -ltinyobjloader -fopenmp -o scratch/$1
