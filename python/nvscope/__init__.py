"""nvscope from Python.

    import nvscope
    nvscope.attach(output_dir="prof")          # at the top of a script, before CUDA starts
    ...
    p = nvscope.load("prof/nvscope_1234.json")  # the tables as DataFrames, the verdict as a dict

The `nvscope` command (`nvscope run -- python train.py`) comes with the package.
"""
from ._attach import attach
from ._command import executable, injection_library
from ._load import Profile, load

__all__ = ["attach", "load", "Profile", "executable", "injection_library"]
