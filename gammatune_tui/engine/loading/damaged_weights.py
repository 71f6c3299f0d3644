"""Weight files that cannot be whole, found from their headers before transformers reads them.

A download cut short or a copy that ran out of disk leaves a
`model.safetensors` shorter than its own header says; safetensors then
fails deep inside `from_pretrained` with a traceback about "incomplete
metadata". Reading the header (a length and a small JSON table of tensor
offsets) costs microseconds and tells the user which file is damaged and
how. The GGUF conversion cache uses the same test to convert again instead
of failing on every start.

Two more faults are found here, each named in one line: a sharded model
whose index lists a shard file the folder lacks (transformers then says only
that there are no safetensors weights), and weights that lack tensors the
config asks for (a config.json declaring 6 layers over 4 layers' weights):
transformers fills those with random numbers and loads, so the same greedy
run printed different text each time.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Iterable

MAX_HEADER = 100 * 1024 * 1024   # safetensors' own limit on the header's size


def read_header(path: Path) -> tuple[dict, int, int] | str:
    """A .safetensors file's header (its table of tensors), where its data starts and its size in bytes; or why it
    cannot be whole (cut short, not safetensors at all). Reads the header only: what a load checks before it reads
    weights, and what `--dtype auto` weighs (model_files.matrix_bytes)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(8)
            if len(head) < 8:
                return f"only {size} bytes, not a safetensors file (cut short?)"
            n = struct.unpack("<Q", head)[0]
            if n > MAX_HEADER or 8 + n > size:
                return f"cut short or not a safetensors file ({size} bytes; its header alone would need {8 + n})"
            header = json.loads(fh.read(n))
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    except (ValueError, UnicodeDecodeError):
        return "its header is not valid JSON: damaged, or not a safetensors file"
    if not isinstance(header, dict):
        return "its header is not a table of tensors: damaged, or not a safetensors file"
    return header, 8 + n, size


def safetensors_fault(path: Path) -> str | None:
    """Why a .safetensors file cannot be whole (cut short, not safetensors at all), or None; reads its header only."""
    read = read_header(path)
    if isinstance(read, str):
        return read
    header, start, size = read
    try:
        end = max((int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"), default=0)
    except (KeyError, TypeError, ValueError, IndexError):
        return "its header's tensor offsets are unreadable: damaged, or not a safetensors file"
    if start + end > size:
        return f"cut short: {size} bytes where its header says {start + end} (download or copy it again)"
    return None


def first_damaged(folder: Path) -> tuple[Path, str] | None:
    """The first damaged .safetensors file in a model folder, with its fault; None when all look whole."""
    for f in sorted(Path(folder).glob("*.safetensors")):
        fault = safetensors_fault(f)
        if fault is not None:
            return f, fault
    return None


def missing_shard(folder: Path) -> tuple[Path, str] | None:
    """(the index, a shard file it lists that the folder lacks), or the index and why it is unreadable; None when
    every listed shard is there. Safetensors indexes, and pickle ones beside no safetensors index."""
    indexes = sorted(folder.glob("*.safetensors.index.json")) or sorted(folder.glob("*.bin.index.json"))
    for index in indexes:
        try:
            data = json.loads(index.read_text(encoding="utf-8"))
            shards = sorted({str(v) for v in data["weight_map"].values()})
        except (OSError, ValueError, UnicodeDecodeError, KeyError, TypeError, AttributeError):
            return index, "is not a readable shard index (no weight_map of tensor names to files)"
        for shard in shards:
            if not (folder / shard).is_file():
                return index, f"lists the shard {shard}, which is not in the folder (get the files again)"
    return None


def unreadable_json(folder: Path) -> tuple[Path, str] | None:
    """The first of a model folder's own .json files (config, tokenizer, generation config, shard index) that is
    not a JSON object, with why; transformers reads some without saying which file failed, and skips a broken
    generation_config.json silently."""
    known = ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json",
             "special_tokens_map.json")
    for f in sorted(p for p in Path(folder).glob("*.json") if p.name in known or p.name.endswith(".index.json")):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except OSError as exc:
            return f, f"cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            return f, "is not UTF-8 text, so not JSON: damaged, or not this file"
        except ValueError as exc:
            return f, f"is not valid JSON ({str(exc).splitlines()[0]}): damaged, or edited by hand"
        if not isinstance(data, dict):
            return f, f"holds a JSON {type(data).__name__}, not an object of settings"
    return None


def unindexed_shards(folder: Path) -> str | None:
    """Shard files (model-00001-of-00003.safetensors) without the index that says which tensor is in which."""
    shards = sorted(p.name for p in Path(folder).glob("*-of-*.safetensors"))
    if shards and not any(Path(folder).glob("*.safetensors.index.json")):
        return (f"holds shard files ({shards[0]} …) but no *.safetensors.index.json saying which tensor each holds "
                "(get the index again)")
    return None


def unused_layers(keys: Iterable[str]) -> str | None:
    """Layers the weight files hold that the config does not build (a config declaring fewer layers), or None;
    other unused tensors (a head transformers ignores on purpose) are left alone. So is an MTP head kept as
    layer N + i of the model (DeepSeek-V3, GLM-4.5: engine/drafting/mtp_layouts.py), known by its own
    tensors (`eh_proj`, `enorm`, `hnorm`): transformers skips it by a fixed number (`layers.61` for DeepSeek-V3),
    so a checkpoint of another depth reports it unused; and a head under `mtp.` (Qwen3.5, Mellum: `mtp.layers.0`)."""
    keys = list(keys)
    heads = {m.group(1) for k in keys if (m := re.search(r"\blayers\.(\d+)\.(?:eh_proj|enorm|hnorm)\.", k))}
    layers = sorted({int(m.group(1)) for k in keys if not re.match(r"(?:model\.)?mtp\.", k)   # Qwen3.5's head
                     and (m := re.search(r"\blayers\.(\d+)\.", k)) and m.group(1) not in heads})
    if not layers:
        return None
    span = f"{layers[0]}–{layers[-1]}" if len(layers) > 1 else str(layers[0])
    return f"its weight files hold layer{'s' if len(layers) > 1 else ''} {span}, which its config does not build"


def missing_tensors(keys: Iterable[str]) -> str | None:
    """The tensors a model expected and its files lacked, in a few words (layers by number); None if none."""
    keys = sorted(set(keys))
    if not keys:
        return None
    layers = sorted({int(m.group(1)) for k in keys if (m := re.search(r"\blayers\.(\d+)\.", k))})
    others = [k for k in keys if not re.search(r"\blayers\.\d+\.", k)]
    parts = []
    if layers:
        span = (f"{layers[0]}–{layers[-1]}" if layers == list(range(layers[0], layers[-1] + 1))
                else ", ".join(map(str, layers[:8])) + (" …" if len(layers) > 8 else ""))
        parts.append(f"layer{'s' if len(layers) > 1 else ''} {span}")
    if others:
        parts.append(", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else ""))
    return f"weights missing for {' and '.join(parts)} ({len(keys)} tensor{'s' if len(keys) > 1 else ''}, e.g. {keys[0]})"


__all__ = ["first_damaged", "read_header", "safetensors_fault", "missing_shard", "missing_tensors", "unreadable_json",
           "unindexed_shards", "unused_layers"]
