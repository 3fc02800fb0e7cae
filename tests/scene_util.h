// A library scene loaded for a test: its model, settings and description (the grasp block).
#pragma once

#include <string>

#include <doctest/doctest.h>

#include "engine/scene/scene_loader.h"

namespace cs::test {

struct LoadedScene {
    Model model;
    WorldSettings settings;
    SceneInfo info;
};

inline LoadedScene loadLibraryScene(const std::string& name) {
    LoadedScene l;
    std::string error;
    REQUIRE_MESSAGE(loadScene(name, l.model, l.settings, l.info, &error), error);
    return l;
}

}  // namespace cs::test
