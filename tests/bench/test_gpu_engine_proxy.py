"""benchmarks/gpu_engine.py --cpu-proxy: the GPU benchmark's whole pipeline on tiny CPU shapes, so it keeps working.

It checks what a reader of the report relies on: the step table by capacity and window with the attention
path named, every speculative row's output equal to transformers' plain greedy tokens, and the goals
marked "not measured" (never a number) without CUDA.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_cpu_proxy_runs_end_to_end():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_engine.py"), "--cpu-proxy",
                          "--capacities", "256", "--windows", "1,5"], capture_output=True, text=True, env=env,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout
    for q in (1, 5):
        assert f"| 256 | {q} | graph-body | no | sdpa |" in text
        assert f"| 256 | {q} | transformers | no |" in text
    for row in ("ours (static)", "ours (graph-body)", "ours plain (graph-body)", "transformers assisted"):
        line = next(ln for ln in text.splitlines() if ln.startswith(f"| {row} |"))
        assert "= transformers plain greedy on 1/1 prompts" in line, line
        if row.startswith("ours ("):  # specdecode: the window comes back with the verdict, one read a step
            assert line.rstrip().endswith("| 1.00 |"), line
    assert text.count("not measured (needs CUDA)") == 5
