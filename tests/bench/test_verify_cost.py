"""c(k), the cost of a k-token verify over a one-token pass, and the kernel path it ran on (issue 42 item 1).

Before: `bench --latency` printed ms only and the doctor's costs no ratio and no kernel, so a user could not see
that a float32 verify on a CPU costs k steps while a bf16 one on native hardware costs little more than one."""

from __future__ import annotations

import json

import pytest

from rich.console import Console

from gammatune_tui.bench.doctor import examine as dr
from gammatune_tui.bench.doctor.report import costs_table, verdict_lines, verify_cost_line
from gammatune_tui.cli import main
from gammatune_tui.engine.common import kernel_path as kp


def _report(verify_ms, dtype="bfloat16", kernel="bf16: oneDNN brgemm (AMX)"):
    return dr.DraftReport("self:int4", "self:int4", predicted=1.3, best_method="specdecode", best_gamma=4,
                          passes=3, oracle=1.5, draft_ms=14.0, plain_tok_s=30.0, verify_ms=verify_ms,
                          machine={"dtype": dtype, "kernel": kernel})


def _text(renderable) -> str:
    console = Console(width=160, record=True)
    console.print(renderable)
    return " ".join(console.export_text().replace("│", " ").split())


def test_doctor_says_c5_with_precision_and_kernel():
    r = _report({1: 28.0, 2: 29.0, 5: 31.5})
    line = verify_cost_line([r])
    assert line == ("the target's verify: c(5) = 1.12 (a 5-token pass costs 1.12 one-token passes) at bfloat16, "
                    "kernel path bf16: oneDNN brgemm (AMX)")
    assert line in _text(verdict_lines([r]))
    costs = _text(costs_table([r]))
    assert "c(k): that pass ÷ a one-token pass 1.00 1.04 1.12" in costs
    assert "target at bfloat16, kernel path bf16: oneDNN brgemm (AMX)" in costs
    # no k=5 timed: the widest window it has
    assert verify_cost_line([_report({1: 40.0, 3: 100.0}, "float32", "fp32: MKL sgemm")]).startswith(
        "the target's verify: c(3) = 2.50")


def test_kernel_path_follows_the_cpu(monkeypatch):
    assert kp.kernel_path("float32", "cpu").startswith("fp32: ")
    monkeypatch.setattr(kp, "_cpu_has", lambda name: False)
    assert kp.kernel_path("torch.bfloat16", "cpu") == "bf16: emulated (no native bf16 on this CPU: slower than fp32)"
    assert not kp.native_bf16_cpu()
    monkeypatch.setattr(kp, "_cpu_has", lambda name: name == "avx512_bf16")
    assert kp.kernel_path("bfloat16", "cpu") == "bf16: oneDNN (AVX512-BF16)" and kp.native_bf16_cpu()
    monkeypatch.setattr(kp, "_cpu_has", lambda name: name in ("avx512_bf16", "amx_tile"))
    assert kp.kernel_path("bfloat16", "cpu") == "bf16: oneDNN brgemm (AMX)"


@pytest.mark.parametrize("unit", ["AMX", ""])
def test_latency_table_gives_c_k_and_the_kernel(tmp_path, capsys, monkeypatch, unit):
    from gammatune_tui.bench.modes import latency

    monkeypatch.setattr(latency, "native_bf16_unit", lambda: unit)
    cfg = tmp_path / "tiny" / "config.json"
    cfg.parent.mkdir()
    cfg.write_text(json.dumps({"model_type": "llama", "hidden_size": 32, "intermediate_size": 64,
                               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                               "vocab_size": 64, "max_position_embeddings": 128}))
    out = tmp_path / "lat.json"
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--latency", "--shape", str(cfg), "--latency-context", "8", "--verify-k", "1,5",
              "--device", "cpu", "--threads", "1", "--engine", "eager", "-o", str(out)])
    seen = capsys.readouterr()
    text = " ".join(seen.out.split())
    assert exit_.value.code == 0
    # auto on a CPU with native bfloat16: said that `run` would load a real model in bfloat16 (no word elsewhere)
    assert ("add --dtype bfloat16 to time that path" in " ".join(seen.err.split())) == bool(unit)
    data = json.loads(out.read_text())
    assert data["environment"]["kernel"] == kp.kernel_path("float32", "cpu")
    assert ("c(5)" in text or "c5 = verify 5 ÷ one-token pass" in text) and f"kernel path: {data['environment']['kernel']}" in text
    row = data["rows"][0]
    assert f"{row['verify_ms']['5'] / row['verify_ms']['1']:.2f}" in text


def test_doctor_points_a_costly_fp32_verify_to_native_bf16(monkeypatch):
    from gammatune_tui.bench.doctor import report as rp

    costly = _report({1: 40.0, 5: 70.0}, "float32", "fp32: MKL sgemm")
    costly.machine["device"] = "cpu"
    monkeypatch.setattr(rp, "native_bf16_cpu", lambda: True)
    assert "try --dtype bfloat16" in verify_cost_line([costly])
    monkeypatch.setattr(rp, "native_bf16_cpu", lambda: False)   # no native bf16: nothing to suggest
    assert "try" not in verify_cost_line([costly])
    monkeypatch.setattr(rp, "native_bf16_cpu", lambda: True)
    packed = _report({1: 40.0, 5: 55.2}, "float32", "fp32: MKL sgemm for 1-3 tokens, oneDNN packed from 4")
    packed.machine["device"] = "cpu"
    assert "try --dtype bfloat16" in verify_cost_line([packed])   # c(5) 1.38: bf16 still raced faster on SmolLM2
    cheap = _report({1: 40.0, 5: 46.0}, "float32", "fp32: MKL sgemm")
    cheap.machine["device"] = "cpu"
    assert "try" not in verify_cost_line([cheap])             # c(5) 1.15: the verify is cheap already
    assert "float32: the greedy text is exactly target.generate's" in verify_cost_line([cheap])   # named, with why
    monkeypatch.setattr(rp, "native_bf16_cpu", lambda: False)
    assert "--dtype auto keeps float32 on a CPU without native bfloat16" in verify_cost_line([cheap])
    chosen = _report({1: 40.0, 5: 43.6}, "bfloat16", "bf16: oneDNN brgemm (AMX)")
    chosen.machine.update(device="cpu", dtype_why="auto for this CPU's AMX")
    line = verify_cost_line([chosen])
    assert "bfloat16 is what --dtype auto runs for this CPU's AMX" in line and "--dtype float32" in line
    assert "try" not in line
