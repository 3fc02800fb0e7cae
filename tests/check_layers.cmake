# The layers point downward (issue 37): the stages under engine/ (collision, contact, core, fem,
# geometry, solver) include neither engine/world.h, which holds World above them, nor gpu/, the
# CUDA executor above everything. They read their settings from engine/settings.h and what the
# step shares from engine/step_types.h. Run by ctest (engine.layers):
#   cmake -DROOT=<source dir> -P tests/check_layers.cmake
#
# Files that drive a whole World, and so sit above it although they live in a stage's folder:
#   engine/fem/fem_pick.cpp/.h    the app's mouse pick and throw of a deformable body act on a World
#                                 (World::rayCast, setFemDrag, its FEM state)
#   engine/fem/fem_extension.cpp  [NSN] figure 13's experiment builds a World and steps it
set(allowed
    engine/fem/fem_pick.h
    engine/fem/fem_pick.cpp
    engine/fem/fem_extension.cpp)

cmake_minimum_required(VERSION 3.20)   # IN_LIST in a -P script
if(NOT ROOT)
  message(FATAL_ERROR "check_layers.cmake: pass -DROOT=<source dir>")
endif()
set(layers collision contact core fem geometry solver)
set(found 0)
set(checked 0)
foreach(layer ${layers})
  file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/engine/${layer}/*.h ${ROOT}/engine/${layer}/*.cpp
       ${ROOT}/engine/${layer}/*.cc ${ROOT}/engine/${layer}/*.cu ${ROOT}/engine/${layer}/*.cuh)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    if(f IN_LIST allowed)
      continue()
    endif()
    file(STRINGS ${ROOT}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](engine/world\\.h|gpu/)")
    foreach(line ${lines})
      message(SEND_ERROR "${f}: ${line} (a stage includes a layer above it)")
      math(EXPR found "${found} + 1")
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers.cmake: no files under ${ROOT}/engine")
endif()
if(found GREATER 0)
  message(FATAL_ERROR "${found} upward include(s) in the engine's stages")
endif()
string(REPLACE ";" "," names "${layers}")
message(STATUS "layers: ${checked} files of engine/{${names}} include neither engine/world.h nor gpu/")
