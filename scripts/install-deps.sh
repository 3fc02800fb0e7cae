#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those missing. Uses sudo when not root.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config
      libeigen3-dev nlohmann-json3-dev libqhull-dev libtinyobjloader-dev doctest-dev
      libtet1.5-dev libimgui-dev libglfw3-dev python3-glad python3-jinja2 libglm-dev libstb-dev
      xvfb xauth libgl1-mesa-dri libegl-dev libegl-mesa0 ffmpeg python3-matplotlib
      libsuitesparse-dev libopenblas0-serial)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
