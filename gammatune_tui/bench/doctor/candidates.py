"""The drafts `gammatune doctor` examines when given none: the embedded draft and two deliberately poor ones.

A newcomer should see a real ranking offline, in under a minute, without
downloading anything. So beside the embedded demo draft the doctor builds two
candidates that share its tokenizer, in a temporary folder that is deleted
afterwards (never shipped as weights): the demo draft cut to its first layer
(cheaper per token, worse at guessing) and a draft of that one-layer shape
with random weights (it guesses nothing, so every drafted token is wasted
time).
"""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ... import resources
from .examine import Candidate

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def demo_target() -> str:
    return str(resources.require_demo_pair() / "target")


def demo_candidates(folder: Path) -> list[Candidate]:
    """The embedded draft, and the two poor drafts written into `folder` (a temporary directory)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    draft = resources.require_demo_pair() / "draft"
    out = [Candidate("demo draft", str(draft), ())]

    one = folder / "first-layer"
    model = AutoModelForCausalLM.from_pretrained(str(draft), dtype=torch.float32, use_safetensors=True)
    model.model.layers = model.model.layers[:1]
    model.config.num_hidden_layers = 1
    if getattr(model.config, "layer_types", None):
        model.config.layer_types = model.config.layer_types[:1]
    model.save_pretrained(str(one), safe_serialization=True)
    _copy_tokenizer(draft, one)
    out.append(Candidate("demo draft, first layer only", str(one), None))

    rnd = folder / "random"
    cfg = AutoConfig.from_pretrained(str(one))  # the one-layer shape: as cheap per token as the cut draft
    torch.manual_seed(0)
    AutoModelForCausalLM.from_config(cfg).save_pretrained(str(rnd), safe_serialization=True)
    _copy_tokenizer(draft, rnd)
    out.append(Candidate("random weights, one layer", str(rnd), None))
    return out


def _copy_tokenizer(src: Path, dst: Path) -> None:
    for name in TOKENIZER_FILES:
        if (src / name).is_file():
            shutil.copy2(src / name, dst / name)


@contextmanager
def built_demo_candidates() -> Iterator[list[Candidate]]:
    """`demo_candidates` in a temporary folder that is deleted when the block ends (interrupted or not)."""
    with tempfile.TemporaryDirectory(prefix="gammatune-doctor-") as folder:
        yield demo_candidates(Path(folder))
