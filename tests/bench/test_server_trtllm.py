"""`doctor --server-log` on TensorRT-LLM's per-request `speculative_decoding` payload and on AIPerf's engine-neutral
`SpecDecodeAcceptanceRecord` (issue 43 item 1): summed over requests, the mean acceptance length derived (TRT-LLM
sends none), K from the histogram when `num_spec_tokens` is null (and said so), the server named; a damaged file is
one line and exit 2. Then a trial of malformed logs of every format: each is read or refused in one line, never
a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gammatune_tui.bench.deploy.server_log import ServerLogError, read
from server_log_cases import assert_refused

FIXTURES = Path(__file__).parent / "fixtures"
TRT = (FIXTURES / "trtllm-responses.jsonl").read_text().splitlines()


def test_responses_are_summed_with_the_acceptance_length_derived(tmp_path):
    f = tmp_path / "trt.jsonl"
    f.write_text("\n".join(TRT))
    log = read(f)
    assert (log.engine, log.k, log.steps, log.drafted, log.accepted, log.requests) == ("TensorRT-LLM", 3, 28, 84, 38, 2)
    assert log.mean_acceptance_length == pytest.approx(1 + 38 / 28)
    assert log.survival == pytest.approx([16 / 28, 14 / 28, 8 / 28])   # steps accepting ≥ 1, 2, 3
    assert any("no per-step arrays" in n for n in log.notes or [])


def test_a_null_window_takes_k_from_the_histogram_and_says_so(tmp_path):
    one = json.loads(TRT[0])
    one["choices"][0]["speculative_decoding"]["num_spec_tokens"] = None
    f = tmp_path / "trt.json"
    f.write_text(json.dumps(one))
    log = read(f)
    assert log.k == 3 and "num_spec_tokens is null" in (log.notes or [""])[0]


def test_aiperf_records_read_with_vllms_names_and_name_their_server(tmp_path):
    f = tmp_path / "aiperf.jsonl"
    f.write_text((FIXTURES / "aiperf-records.jsonl").read_text())
    log = read(f)
    assert log.engine == "AIPerf record (tensorrt_llm)" and (log.k, log.steps, log.accepted, log.drafted) == (3, 28, 38, 84)


def _trt(**over) -> str:
    one = json.loads(TRT[0])
    block = one["choices"][0]["speculative_decoding"]
    for k, v in over.items():
        if v is None:
            block.pop(k, None)
        else:
            block[k] = v
    return json.dumps(one)


BAD = {
    "steps off": (_trt(num_spec_steps=19), "the histogram counts 20 steps, num_spec_steps says 19"),
    "accepted off": (_trt(total_accepted_draft_tokens=29), "the histogram accepts 30 drafts"),
    "accepted > drafted": (_trt(total_draft_tokens=29), "is more than total_draft_tokens 29"),
    "histogram too long": (_trt(acceptance_histogram=[8, 0, 6, 6, 0]), "num_spec_tokens 3 allows 4"),
    "histogram not a list": (_trt(acceptance_histogram={"0": 8}), "acceptance_histogram must be a list"),
    "a string count": (_trt(acceptance_histogram=[8, 0, "x", 6]), "acceptance_histogram[2] must be a count"),
    "missing drafted": (_trt(total_accepted_draft_tokens=None), "total_accepted_draft_tokens is missing"),
    "no step": (_trt(num_spec_steps=0, acceptance_histogram=[0, 0, 0, 0], total_accepted_draft_tokens=0),
                "no speculative step"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_damaged_response_is_one_line_naming_the_field_and_exit_2(tmp_path, capsys, name):
    content, needle = BAD[name]
    assert_refused(tmp_path / "trt.json", content, needle, capsys)


def _mutations(text: str) -> list[str]:
    """Broken variants of a good log: cut short, a number made a word, negative, NaN or huge, a key renamed."""
    out = [text[: len(text) * i // 5] for i in range(1, 5)]
    import re

    numbers = list(re.finditer(r"(?<![\w.])\d+(?:\.\d+)?", text))
    for m in numbers[:: max(1, len(numbers) // 4)][:4]:
        for repl in ("many", "-7", "NaN", "1e308"):
            out.append(text[: m.start()] + repl + text[m.end():])
    keys = list(re.finditer(r'"(\w+)":', text))
    for m in keys[:: max(1, len(keys) // 3)][:3]:
        out.append(text[: m.start()] + '"renamed_' + m.group(1) + '":' + text[m.end():])
    return out


GOOD = {"trt.jsonl": "\n".join(TRT), "aiperf.jsonl": (FIXTURES / "aiperf-records.jsonl").read_text(),
        "sglang.jsonl": (FIXTURES / "sglang-responses.jsonl").read_text(),
        "metrics.prom": (FIXTURES / "vllm-metrics.prom").read_text(),
        "sglang-info.json": (FIXTURES / "sglang-server-info.json").read_text(),
        "llama.log": "draft acceptance rate = 0.57037 (  77 accepted /  135 generated)\n"
                     "statistics ngram_simple: #calls(b,g,a) = 1 45 27, #gen drafts = 45, #acc drafts = 27, "
                     "#gen tokens = 135, #acc tokens = 77, dur(b,g,a) = 0.001, 0.026, 0.013 ms\n"}


def test_about_fifty_malformed_logs_are_each_read_or_refused_in_one_line(tmp_path):
    tried = 0
    for name, text in GOOD.items():
        for i, bad in enumerate(_mutations(text)):
            f = tmp_path / f"{i}-{name}"
            f.write_text(bad)
            try:
                read(f)
            except ServerLogError as exc:   # refused: one line, naming the file
                assert "\n" not in str(exc) and str(f) in str(exc), str(exc)
            tried += 1
    assert tried >= 100, tried   # 131: about 20 per format
