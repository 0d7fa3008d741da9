"""Memory a run frees is kept for the next run (explorer/heap.py): a second run while the first trace is
still held (the app re-running with the old trace on screen) reuses pages instead of faulting fresh ones."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, resource, sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import explorer
from explorer.heap import keep_freed_memory

rng = np.random.default_rng(0)
hidden, seq, batch = 64, 100, 8
weights = [numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)
           for name, shape in (("W", (1, 4 * hidden, 16)), ("R", (1, 4 * hidden, hidden)))]
graph = helper.make_graph([helper.make_node("LSTM", ["X", "W", "R"], ["Y"], hidden_size=hidden)], "lstm",
                          [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, 16])],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], weights)
model = explorer.load(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]))
feeds = {"X": rng.standard_normal((seq, batch, 16)).astype(np.float32)}
faults = []
kept = [explorer.run(model, feeds), explorer.run(model, feeds)]
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    kept.append(explorer.run(model, feeds))  # the run before it is still held
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    kept.pop(0)
print(json.dumps({"kept": keep_freed_memory(), "faults": min(faults), "recorded": kept[-1].recorded_bytes}))
"""


def run_script(**environ: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(environ)
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc is asked on Linux only")
def test_a_run_reuses_the_memory_an_earlier_run_freed():
    kept = run_script()
    assert kept["kept"] is True
    pages = kept["recorded"] / 4096
    assert kept["faults"] < 0.1 * pages, kept
    # the same runs with glibc left to its defaults touch fresh pages for most of what they record
    default = run_script(MALLOC_TRIM_THRESHOLD_="131072")
    assert default["kept"] is False
    assert default["faults"] > 0.5 * pages, default



HANDED_BACK = r"""
import json, sys
import numpy as np
from explorer.heap import hand_back, keep_freed_memory

def rss():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) << 10 for line in f if line.startswith("VmRSS:")) >> 20

keep_freed_memory()
hand_back(sys.argv[1] == "on")
made = [np.ones(1 << 17) for _ in range(48)]  # 48 MiB from the heap (blocks of 1 MiB)
held = rss()
del made
print(json.dumps({"held": held, "kept": rss()}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc is asked on Linux only")
def test_memory_handed_back_goes_to_the_system_as_it_is_freed():
    """A shared app hands freed memory back (ui/owned.py): what a visitor's run freed is not kept for runs."""
    def rss(mode: str) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        done = subprocess.run([sys.executable, "-c", HANDED_BACK, mode], capture_output=True, text=True, env=env,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    kept = rss("off")
    assert kept["kept"] > kept["held"] - 8, kept  # kept for the next run
    handed = rss("on")
    assert handed["kept"] < handed["held"] - 40, handed
