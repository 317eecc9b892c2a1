# The nvscope Python package: the `nvscope` command and its injection library, nvscope.load()
# for the JSON summaries and nvscope.attach() to profile the running script. Built with
# setuptools alone, no network (Debian: python3-setuptools, python3-venv):
#
#   python3 -m venv venv && venv/bin/pip install ./python        # builds the command with CMake
#   NVSCOPE_PREBUILT=build/cpu venv/bin/pip install ./python       # or takes it from a build or install tree
#
# NVSCOPE_SOURCE names the repository when this folder was copied out of it.
# NVSCOPE_PREBUILT names a folder holding bin/nvscope and lib/libnvscope_inject.so (a CMake
# build folder of this repository, or an install prefix). Without it, setup.py configures and
# builds those two targets under python/build/cmake, or NVSCOPE_BUILD_DIR (needs CMake, a C++
# compiler and the CUDA toolkit's headers; no nvcc, no GPU, no network; CMAKE_BUILD_PARALLEL_LEVEL
# sets the jobs). Where neither is possible the package installs without the command, says why
# in one line, and `nvscope` says so in one line too; NVSCOPE_REQUIRE_COMMAND=1 makes that a
# failed install instead.
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository this folder belongs to (NVSCOPE_SOURCE where python/ was copied elsewhere).
ROOT = os.path.abspath(os.environ.get("NVSCOPE_SOURCE") or os.path.dirname(HERE))


def version():
    text = open(os.path.join(ROOT, "include", "nvscope", "version.hpp")).read()
    parts = [re.search(r"#define NVSCOPE_VERSION_%s (\d+)" % p, text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def without_command(why):
    """The command cannot be had: one line on stderr, and the install goes on without it (or
    stops, with NVSCOPE_REQUIRE_COMMAND=1)."""
    ways = ("give NVSCOPE_PREBUILT=<a build folder with bin/nvscope>, or install CMake, a C++ compiler and the "
            "CUDA toolkit's headers")
    if os.environ.get("NVSCOPE_REQUIRE_COMMAND") == "1":
        raise SystemExit("nvscope: %s: not installed, NVSCOPE_REQUIRE_COMMAND=1 asks for the nvscope command (%s)" % (why, ways))
    sys.stderr.write("nvscope: %s: installing without the nvscope command (%s)\n" % (why, ways))
    return None


def built_tree():
    given = os.environ.get("NVSCOPE_PREBUILT")
    if given:
        return os.path.abspath(given)
    if shutil.which("cmake") is None:
        return without_command("cmake not found")
    build = os.path.abspath(os.environ.get("NVSCOPE_BUILD_DIR") or os.path.join(HERE, "build", "cmake"))
    configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                 "-DNVSCOPE_BUILD_TESTS=OFF", "-DNVSCOPE_BUILD_EXAMPLES=OFF", "-DNVSCOPE_BUILD_BENCH=OFF",
                 "-DNVSCOPE_BUILD_TOOLS=ON", "-DNVSCOPE_INSTALL=OFF"]
    if subprocess.call(configure) != 0:
        return without_command("CMake could not configure %s" % ROOT)
    if subprocess.call(["cmake", "--build", build, "--target", "nvscope_cli", "nvscope_inject"]) != 0:
        return without_command("the command could not be built in %s (no CUDA toolkit found? see its CMake output)" % build)
    return build


class build_with_command(build_py):
    """Copies bin/nvscope and lib/libnvscope_inject.so into the package (nvscope/_prefix/)."""

    def run(self):
        super().run()
        tree = built_tree()
        if tree is None:
            return
        for sub, name in (("bin", "nvscope"), ("lib", "libnvscope_inject.so")):
            source = os.path.join(tree, sub, name)
            if not os.path.exists(source):
                raise SystemExit("nvscope: %s not found in %s (NVSCOPE_PREBUILT)" % (os.path.join(sub, name), tree))
            target = os.path.join(self.build_lib, "nvscope", "_prefix", sub)
            os.makedirs(target, exist_ok=True)
            shutil.copy2(source, os.path.join(target, name))


setup(
    name="nvscope",
    version=version(),
    description="Profile CUDA programs in-process: nsys-style tables, a verdict, traces and pictures",
    long_description=open(os.path.join(HERE, "README.md")).read(),
    long_description_content_type="text/markdown",
    packages=["nvscope"],
    python_requires=">=3.8",
    extras_require={"pandas": ["pandas"]},
    entry_points={"console_scripts": ["nvscope=nvscope._command:main"]},
    cmdclass={"build_py": build_with_command},
    zip_safe=False,
)
