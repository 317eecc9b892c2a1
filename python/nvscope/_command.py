"""The `nvscope` command of the package: the compiled tool it carries, run in this process's place."""
import os
import sys

_PREFIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix")


def executable():
    """The path of the packaged `nvscope` binary, or None when the package was built without it."""
    path = os.path.join(_PREFIX, "bin", "nvscope")
    return path if os.access(path, os.X_OK) else None


def injection_library():
    """The path of the packaged libnvscope_inject.so, or None."""
    path = os.path.join(_PREFIX, "lib", "libnvscope_inject.so")
    return path if os.path.exists(path) else None


def main():
    tool = executable()
    if tool is None:
        sys.stderr.write("nvscope: this Python package was installed without the nvscope command "
                         "(reinstall with CMake and the CUDA toolkit's headers present, or NVSCOPE_PREBUILT=<build folder>)\n")
        return 2
    os.execv(tool, [tool] + sys.argv[1:])
    return 127  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
