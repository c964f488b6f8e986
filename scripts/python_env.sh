#!/usr/bin/env bash
# Creates the Python environment the build and the tests use (a virtual environment, so
# nothing is installed into the system's Python) with what building and testing the
# package needs. Idempotent: it only installs what is missing. Usage: python_env.sh VENV
set -euo pipefail
venv="$1"
python_packages=(nanobind scikit-build-core numpy pytest tqdm mypy)

if [ ! -x "$venv/bin/python" ]; then
  python="$(command -v python3 || true)"
  if [ -z "$python" ] || ! "$python" -c "import venv, ensurepip" 2>/dev/null; then
    echo "python_env: installing python3 and python3-venv"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends python3 python3-venv python3-dev
    python="$(command -v python3)"
  fi
  "$python" -m venv "$venv"
fi

missing=()
for pkg in "${python_packages[@]}"; do
  module="${pkg//-/_}"
  [ "$module" = scikit_build_core ] && module=scikit_build_core
  "$venv/bin/python" -c "import $module" 2>/dev/null || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "python_env: installing ${missing[*]} into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${missing[@]}"
fi

# clang-format is pinned: formatting must not depend on the distribution's version.
clang_format_version=19.1.7
if ! "$venv/bin/clang-format" --version 2>/dev/null | grep -q "version $clang_format_version"; then
  echo "python_env: installing clang-format $clang_format_version into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "clang-format==$clang_format_version"
fi
