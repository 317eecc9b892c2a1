#!/bin/sh
# package_test.sh PYTHON SOURCE BUILD TREE: pip installs SOURCE/python into a new venv under
# BUILD, taking bin/nvscope and lib/libnvscope_inject.so from TREE (NVSCOPE_PREBUILT), with no
# index (PIP_NO_INDEX: nothing is downloaded), then runs test_package.py in that venv.
# TREE given as --build-dir=FOLDER: no NVSCOPE_PREBUILT; setup.py configures and builds the
# command with CMake in FOLDER (NVSCOPE_BUILD_DIR) and fails rather than install without it
# (NVSCOPE_REQUIRE_COMMAND=1).
# Exit 77 (skipped) where python3 has no venv module (Debian: apt-get install python3-venv).
set -eu
python=$1 source=$2 build=$3 tree=$4
"$python" -c "import venv, ensurepip" 2>/dev/null || { echo "skipped: python3-venv is not installed"; exit 77; }
rm -rf "$build/venv" "$build/src"
mkdir -p "$build/src"
cp -R "$source/python" "$build/src/python"   # pip builds in the folder it is given: not in the repository
rm -rf "$build/src/python/build"
"$python" -m venv "$build/venv"
# Debian 12's pip (23.0) installs a setup.py-only project with setuptools' own `setup.py install`;
# a newer pip builds a wheel, offline only with --no-build-isolation and a setuptools that can
# (70.1 or newer, or the wheel package): tried second.
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 NVSCOPE_SOURCE="$source"
case $tree in
  --build-dir=*) export NVSCOPE_BUILD_DIR="${tree#--build-dir=}" NVSCOPE_REQUIRE_COMMAND=1 ;;
  *) export NVSCOPE_PREBUILT="$tree" ;;
esac
if ! "$build/venv/bin/pip" install --quiet "$build/src/python" > "$build/pip.log" 2>&1; then
  if ! "$build/venv/bin/pip" install --quiet --no-build-isolation "$build/src/python" >> "$build/pip.log" 2>&1; then
    if grep -q "invalid command 'bdist_wheel'" "$build/pip.log"; then
      echo "skipped: this python's pip cannot build offline (pip 23.1+ with setuptools < 70.1 and no wheel; Debian 12's python3 can)"
      exit 77
    fi
    # Python 3.12's venv holds no setuptools, and with no index pip cannot fetch one: the
    # system's setuptools (python3-setuptools), seen through a venv with the system's packages.
    if grep -q "No module named 'setuptools'\|No matching distribution found for setuptools" "$build/pip.log"; then
      rm -rf "$build/venv" && "$python" -m venv --system-site-packages "$build/venv"
      if ! "$build/venv/bin/pip" install --quiet --no-build-isolation "$build/src/python" >> "$build/pip.log" 2>&1; then
        echo "skipped: this python has no setuptools to build with offline (install python3-setuptools)"
        exit 77
      fi
    else
      cat "$build/pip.log"; exit 1
    fi
  fi
fi
cd "$build"
NVSCOPE_TEST_SOURCE="$source" "$build/venv/bin/python" "$source/tests/python/test_package.py" -v
