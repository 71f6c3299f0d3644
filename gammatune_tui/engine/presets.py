"""The preset pairs (`--pair NAME`): what `gammatune models` lists, declared without torch.

`gammatune models` must answer at once (issue 17 row 15), so the presets live
in a module that imports nothing heavy; `engine.models` loads them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    name: str
    target: str
    draft: str
    target_params: str
    draft_params: str
    target_size: str
    draft_size: str
    quantize: str | None = None
    vicuna: bool = False
    note: str = ""


# The paper's four pairs plus a current small one. Sizes are of the safetensors
# weights as published (fp16/bf16), rounded.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("vicuna-13b", "lmsys/vicuna-13b-v1.5", "double7/vicuna-160m", "13B", "160M", "26 GB", "0.3 GB",
               vicuna=True, note="paper pair"),
        Preset("vicuna-7b", "lmsys/vicuna-7b-v1.5", "double7/vicuna-68m", "6.7B", "68M", "13.5 GB", "0.14 GB",
               vicuna=True, note="paper pair"),
        Preset("llama-70b", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "70B", "8B",
               "141 GB (70 int8)", "16 GB", quantize="int8", note="paper pair, target in int8"),
        Preset("llama-8b", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.2-1B-Instruct", "8B", "1.2B",
               "16 GB", "2.5 GB", note="paper pair"),
        Preset("qwen-7b", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct", "7.6B", "0.5B",
               "15 GB", "1 GB", note="current small pair"),
    )
}
