#!/usr/bin/env bash
# Installs the Debian packages the build needs, only those missing. Uses sudo when not root.
# Optional packages (the bench's peers) are tried after the required ones; when one cannot be
# installed the build goes on without it and says what it skips.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config
      libeigen3-dev nlohmann-json3-dev libqhull-dev libtinyobjloader-dev doctest-dev
      libtet1.5-dev libimgui-dev libglfw3-dev python3-glad python3-jinja2 libglm-dev libstb-dev
      xvfb xauth libgl1-mesa-dri libegl-dev libegl-mesa0 ffmpeg python3-matplotlib
      libsuitesparse-dev libopenblas0-serial)
# libbullet-dev: Bullet 3.24, the peer runner of `make bench` (bench/peers/bullet_runner.cpp).
optional=(libbullet-dev)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for p in "${pkgs[@]}"; do installed "$p" || missing+=("$p"); done
missing_optional=()
for p in "${optional[@]}"; do installed "$p" || missing_optional+=("$p"); done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || [ ${#missing[@]} -eq 0 ]
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
for p in "${missing_optional[@]}"; do
  echo "install-deps: installing $p (optional)"
  $sudo apt-get install -y -qq --no-install-recommends "$p" ||
    echo "install-deps: $p could not be installed; make bench runs without its rows"
done
