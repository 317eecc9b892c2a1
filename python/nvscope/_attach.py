"""nvscope.attach: profile the running script, as `nvscope run -- python script.py` would."""
import os
import subprocess

from ._command import executable


def _arguments(options):
    out = []
    for key, value in options.items():
        if isinstance(value, bool):
            value = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        out.append("--%s=%s" % (key.replace("_", "-"), value))
    return out


def attach(**options):
    """Sets this process up to be profiled by nvscope from its first CUDA call on.

    Call it at the top of the script, before anything starts CUDA (before `import torch`
    touches the GPU). The options are `nvscope run`'s, with `_` for `-`:

    >>> import nvscope
    >>> nvscope.attach(output_dir="prof", outputs="summary,json,trace,flame")

    The packaged command checks them and answers with the variables `nvscope run` gives a
    program (the injection library, NVTX's route to CUPTI, NVSCOPE_RUN_*), which are set
    here; at the end of the process the summary is printed and the files are written, as
    under `nvscope run`. Returns the variables set. Raises ValueError for a bad option (the
    tool's one line) and RuntimeError when this process cannot be profiled (no driver, another
    tool attached, libcupti missing).
    """
    tool = executable()
    if tool is None:
        raise RuntimeError("nvscope.attach: this package was installed without the nvscope command")
    done = subprocess.run([tool, "env"] + _arguments(options), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if done.returncode == 2:
        raise ValueError(done.stderr.strip())
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    variables = {}
    for line in done.stdout.splitlines():
        name, _, value = line.partition("=")
        if name:
            variables[name] = value
    os.environ.update(variables)
    return variables
