"""nvscope.load: the JSON summary `nvscope run` writes (STEM.json), as tables and a verdict."""
import json
import os

try:
    import pandas as _pandas
except ImportError:  # plain lists of dicts instead
    _pandas = None


class Profile:
    """One process's summary.

    reports   the nsys-named tables (nvtx_sum, cuda_gpu_kern_sum, cuda_gpu_mem_time_sum,
              cuda_gpu_mem_size_sum, nvtx_kern_sum, nvtx_gpu_proj_sum), each a pandas
              DataFrame with nsys's column names, or a list of dicts where pandas is missing
    verdict   the verdict as a dict: "line" and "kind" always, and the diagnosis' fields
              (findings, evidence) where the summary holds them
    metrics   the GPU activity figures (dict)
    json      the whole summary as read
    profile["cuda_gpu_kern_sum"] is profile.reports["cuda_gpu_kern_sum"].
    """

    def __init__(self, data, path):
        self.json = data
        self.path = path
        tables = data.get("reports", {})
        self.reports = {name: _table(rows) for name, rows in tables.items()}
        self.metrics = data.get("metrics", {})
        self.verdict = _verdict(data)

    def __getitem__(self, report):
        return self.reports[report]

    def __repr__(self):
        return "nvscope.Profile(%r: %s)" % (self.path, self.verdict.get("line", ""))


def _table(rows):
    return _pandas.DataFrame(rows) if _pandas is not None else list(rows)


def _verdict(data):
    found = data.get("diagnosis", {}).get("verdict")
    verdict = dict(found) if isinstance(found, dict) else {}
    verdict.setdefault("line", data.get("verdict", ""))
    verdict.setdefault("kind", data.get("verdict_kind", ""))
    return verdict


def load(path):
    """The summary at `path` (STEM.json, or STEM: .json is added) as a Profile.

    >>> p = nvscope.load("prof/nvscope_1234.json")
    >>> p.reports["cuda_gpu_kern_sum"].head()     # a DataFrame with pandas
    >>> p.verdict["line"]
    """
    path = os.fspath(path)
    if not os.path.exists(path) and os.path.exists(path + ".json"):
        path += ".json"
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or "reports" not in data:
        raise ValueError("nvscope.load: %s is not an nvscope summary (no \"reports\"; a .trace.json is the Chrome trace)" % path)
    return Profile(data, path)
