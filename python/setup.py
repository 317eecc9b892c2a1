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
# builds those two targets under python/build/cmake (needs CMake, a C++ compiler and the CUDA
# toolkit's headers; no nvcc, no GPU). Where neither is possible the package installs without
# the command, and `nvscope` says so in one line.
import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
# The repository this folder belongs to (NVSCOPE_SOURCE where python/ was copied elsewhere).
ROOT = os.path.abspath(os.environ.get("NVSCOPE_SOURCE") or os.path.dirname(HERE))


def version():
    text = open(os.path.join(ROOT, "include", "nvscope", "version.hpp")).read()
    parts = [re.search(r"#define NVSCOPE_VERSION_%s (\d+)" % p, text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def built_tree():
    given = os.environ.get("NVSCOPE_PREBUILT")
    if given:
        return os.path.abspath(given)
    if shutil.which("cmake") is None:
        print("nvscope: cmake not found: the package is installed without the nvscope command")
        return None
    build = os.path.join(HERE, "build", "cmake")
    configure = ["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF",
                 "-DNVSCOPE_BUILD_TESTS=OFF", "-DNVSCOPE_BUILD_EXAMPLES=OFF", "-DNVSCOPE_BUILD_BENCH=OFF",
                 "-DNVSCOPE_INSTALL=OFF"]
    if subprocess.call(configure) != 0 or subprocess.call(
            ["cmake", "--build", build, "--target", "nvscope_cli", "nvscope_inject"]) != 0:
        print("nvscope: the command could not be built: the package is installed without it")
        return None
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
