#!/usr/bin/env bash
# Installs what Kiln needs to build and test, and nothing that is already there (idempotent).
set -euo pipefail

debian_packages=(
  cmake ninja-build g++ pkg-config
  llvm-19-dev libtbb-dev libxxhash-dev libzstd-dev
  libgtest-dev libbenchmark-dev libpng-dev zlib1g-dev libopenblas-dev
  libopenexr-dev libembree-dev libpugixml-dev libtinyobjloader-dev libjpeg-dev
)

missing=()
for pkg in "${debian_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
