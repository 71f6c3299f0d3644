"""Where a model is: a directory that holds one, a GGUF file, or the local Hugging Face cache — found without the network.

`load_pair` reads models from here. A directory must look like a model
(config.json, weights, a tokenizer) or the missing parts are named; a hub
id is read from the local cache, and one that is not there fails at once
with the `hf download` command that fetches it (current huggingface_hub
installs `hf`; `huggingface-cli` is gone). The network is used only when
the user asks (`download=True`, `--download`), instead of a minute of
retries and a wall of warnings before the same error. A GGUF file (or a
directory holding one and no config.json) is read through its converted
copy in gammatune's cache (gguf.py).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Sequence

from ...errors import ModelLoadError
from .damaged_weights import (first_damaged, missing_shard, missing_tensors, read_header, unindexed_shards,
                              unreadable_json, unused_layers)
from .gguf import convert, converted_path, gguf_file_of

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[\w.\-]+)?$")


def is_offline() -> bool:
    v = os.environ.get("HF_HUB_OFFLINE", "") or os.environ.get("TRANSFORMERS_OFFLINE", "")
    return v.strip().lower() in ("1", "true", "yes", "on")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


_WEIGHTS_SAFE = ("*.safetensors", "*.safetensors.index.json")
_WEIGHTS_PICKLE = ("*.bin", "*.bin.index.json", "*.pt", "*.pth")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "tokenizer_config.json", "vocab.json", "spiece.model")


def download_command(repo_ids: Sequence[str]) -> str:
    """The command that fetches hub models into the local cache (`hf`, what current huggingface_hub installs)."""
    return " && ".join(f"hf download {r}" for r in repo_ids)


def _missing_parts(d: Path, allow_pickle: bool) -> list[str]:
    """What a model directory lacks: its config, weights (safetensors unless pickle is allowed), a tokenizer."""
    missing = []
    if not (d / "config.json").is_file():
        missing.append("no config.json")
    safe = any(any(d.glob(g)) for g in _WEIGHTS_SAFE)
    pickle = any(any(d.glob(g)) for g in _WEIGHTS_PICKLE)
    if not safe and not pickle:
        missing.append("no weights (*.safetensors)")
    elif not safe and not allow_pickle:
        missing.append("only pickle weights (*.bin): pass --allow-pickle to load them")
    if not any((d / f).is_file() for f in _TOKENIZER_FILES):
        missing.append("no tokenizer (tokenizer.json, tokenizer.model or tokenizer_config.json)")
    return missing


def _cached_snapshot(repo_id: str) -> Path | None:
    """The local Hugging Face cache's snapshot directory holding the repo's config.json (no network)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover
        return None
    try:
        cfg = try_to_load_from_cache(repo_id, "config.json")
    except Exception:
        return None
    return Path(cfg).parent if isinstance(cfg, str) else None


class NotCached(ModelLoadError):
    """A hub id that is not in the local cache (the network is not asked unless --download)."""

    def __init__(self, message: str, repo_id: str):
        super().__init__(message)
        self.repo_id = repo_id


@dataclass(frozen=True)
class ModelRef:
    """Where one model is read from: `path` (a directory, or a cached hub snapshot) or the hub id to fetch."""

    name: str            # what the user typed: a directory or a hub id (used in messages)
    path: str            # what from_pretrained gets: a directory, or the hub id when downloading
    local: bool          # a directory on disk (a user's or the cache's snapshot): no hub call at all
    hub_id: str | None = None
    gguf: str | None = None   # a GGUF file: `path` is it until `load_pair` puts its converted directory there


def locate_pair(target: str, draft: str | None, *, allow_pickle: bool,
                download: bool) -> tuple[ModelRef, ModelRef | None]:
    """Both models located; when neither is cached, one line names both and the command that fetches them.

    No draft (a model-free drafter): the target alone, and None for the draft.
    """
    if draft is None:
        return locate(target, "target", allow_pickle=allow_pickle, download=download), None
    try:
        t = locate(target, "target", allow_pickle=allow_pickle, download=download)
    except NotCached as first:
        try:
            locate(draft, "draft", allow_pickle=allow_pickle, download=download)
        except NotCached as second:
            ids = [first.repo_id, second.repo_id]
            raise NotCached(f"target {ids[0]!r} and draft {ids[1]!r} are not in the local Hugging Face cache: "
                            f"fetch them with `{download_command(ids)}`, or add --download", ids[0]) from None
        raise
    return t, locate(draft, "draft", allow_pickle=allow_pickle, download=download)


def locate(ref: str, what: str, *, allow_pickle: bool = False, download: bool = False) -> ModelRef:
    """Where a model is, after the checks that need no model loaded.

    A directory must hold a model (what is missing is named). A hub id is
    read from its snapshot directory in the local cache — a path, so loading
    it makes no hub call at all — unless `download` asks for the network; a
    hub id that is not cached fails at once, in one line, with the command
    that fetches it.
    """
    p = Path(ref).expanduser()
    gguf_file = gguf_file_of(p)
    if gguf_file is not None:
        return ModelRef(ref, str(gguf_file), True, gguf=str(gguf_file))
    if p.is_dir():
        missing = _missing_parts(p, allow_pickle)
        if missing:
            raise ModelLoadError(f"{what} model {ref!r} is not a model directory: {'; '.join(missing)}")
        return ModelRef(ref, str(p), True)
    if p.exists():
        raise ModelLoadError(f"{what} model {ref!r} is a file but not a GGUF file (*.gguf); give a .gguf file, "
                             "the model's directory or a hub id")
    looks_local = ref.startswith((".", "/", "~")) or ref.count("/") > 1 or not _HUB_ID.match(ref)
    if looks_local:
        raise ModelLoadError(f"{what} model {ref!r}: no such directory")
    if download:
        if is_offline():
            raise ModelLoadError("--download needs the network, but HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set")
        return ModelRef(ref, ref, False, ref)
    snap = _cached_snapshot(ref)
    if snap is None and "/" not in ref:
        from .presets import DEMO, PRESETS

        if ref in PRESETS or ref == DEMO:   # a preset's name where a model goes: no download would fetch it
            raise ModelLoadError(f"{what} model {ref!r} is not a model but a preset pair: use --pair {ref} "
                                 "(`gammatune models` lists them)")
    if snap is None:
        raise NotCached(f"{what} model {ref!r} is not in the local Hugging Face cache: fetch it with "
                        f"`{download_command([ref])}`, or add --download", ref)
    missing = _missing_parts(snap, allow_pickle)
    if missing:
        raise ModelLoadError(f"{what} model {ref!r} is only partly in the local Hugging Face cache "
                             f"({'; '.join(missing)}): fetch it with `{download_command([ref])}`, or add --download")
    return ModelRef(ref, str(snap), True, ref)


def from_pretrained(loader: Callable, ref: ModelRef, what: str, *, download: bool = False, **kw: Any) -> Any:
    """One model or tokenizer: from a directory or the cache's snapshot, or from the hub when `download` allows it."""
    if ref.local and Path(ref.path).is_dir():
        folder = Path(ref.path)   # each fault named in one line, not a traceback or a misleading hint
        damaged = unreadable_json(folder) or first_damaged(folder) or missing_shard(folder)
        if damaged is not None:
            raise ModelLoadError(f"{what} model {ref.name!r}: {damaged[0]}: {damaged[1]}")
        loose = unindexed_shards(folder)
        if loose:
            raise ModelLoadError(f"{what} model {ref.name!r} {loose}")
    try:
        return loader(ref.path, local_files_only=not download, **kw)
    except (ImportError, MemoryError, KeyboardInterrupt):
        raise
    except (OSError, ValueError, EnvironmentError) as exc:
        msg = _one_line(exc)
        name = ref.name
        if "safetensors" in msg.lower() or "use_safetensors" in msg:
            raise ModelLoadError(f"{what} model {name!r} has no safetensors weights; pass --allow-pickle to load "
                                 ".bin files") from None
        if download:
            raise ModelLoadError(f"{what} model {name!r} could not be downloaded ({msg})") from None
        if ref.hub_id:
            raise ModelLoadError(f"{what} model {name!r} could not be read from the local Hugging Face cache "
                                 f"({msg}); fetch it again with `{download_command([ref.hub_id])}`") from None
        raise ModelLoadError(f"{what} model {name!r}: {msg}") from None
    except Exception as exc:   # weights that do not fit config.json (vocab_size), a corrupt pickle (.bin)
        raise ModelLoadError(f"{what} model {ref.name!r}: {_load_fault(ref, exc)}") from None


def load_weights(loader: Callable, ref: ModelRef, what: str, *, download: bool = False, **kw: Any) -> Any:
    """A model from its files (as `from_pretrained`), refused in one line where its files lack a tensor it
    expects: transformers would fill it with random numbers (a config declaring more layers than the files hold)."""
    model, info = from_pretrained(loader, ref, what, download=download, output_loading_info=True, **kw)
    lacking = missing_tensors((info or {}).get("missing_keys") or ())
    if lacking:
        raise ModelLoadError(f"{what} model {ref.name!r}: {lacking}; its config.json asks for more than its "
                             "weight files hold: fix the config or get the files again")
    unused = unused_layers((info or {}).get("unexpected_keys") or ())
    if unused:   # a config declaring fewer layers: a smaller model than the files hold, silently
        raise ModelLoadError(f"{what} model {ref.name!r}: {unused} (its config.json declares fewer layers than "
                             "its weights hold): fix the config or get the files again")
    return model


def _load_fault(ref: ModelRef, exc: BaseException) -> str:
    """What is wrong with a model folder whose files transformers could not load, in one line naming the file."""
    msg = _one_line(exc)
    folder = Path(ref.path) if ref.local else None
    if "mismatched_sizes" in msg or "size mismatch" in msg:
        return ("its weights do not match its config.json (a tensor's shape differs from what the config says, "
                f"e.g. vocab_size): fix {folder / 'config.json' if folder else 'config.json'} or get the files again")
    pickles = sorted(folder.glob("*.bin")) if folder is not None and folder.is_dir() else []
    # random bytes fail torch.load in many ways ("list index out of range" too): with only pickles, it is the file
    if pickles and folder is not None and not any(folder.glob("*.safetensors")):
        return f"{pickles[0]} is not a readable PyTorch weights file (damaged, or holds more than tensors)"
    return f"cannot be loaded from its files ({msg})"


def in_local_cache(repo_id: str) -> bool:
    """Whether a hub model has its config (and some weights) in the local HF cache; never touches the network."""
    snap = _cached_snapshot(repo_id)
    if snap is None:
        return False
    return any(any(snap.glob(g)) for g in _WEIGHTS_SAFE + _WEIGHTS_PICKLE)


def with_gguf_converted(ref: ModelRef, what: str, progress: Callable[[str], None] | None = None) -> ModelRef:
    """A GGUF ref pointed at its converted directory (converted now, or found in the cache); others as they are."""
    if ref.gguf is None:
        return ref
    return replace(ref, path=str(convert(Path(ref.gguf), what, progress)))


def matrix_bytes(ref: ModelRef) -> int | None:
    """Bytes of a local checkpoint's weight matrices (its 2-D tensors) at float32, from the safetensors headers
    alone (no weights read); None where they cannot be read first: not local, no safetensors, a damaged header
    (the load then says why). What `--dtype auto` weighs on a CPU (common/auto_precision.py)."""
    files = sorted(Path(ref.path).glob("*.safetensors")) if ref.local else []
    if not files:
        return None
    total = 0
    for f in files:
        read = read_header(f)
        if isinstance(read, str):
            return None
        try:
            total += sum(4 * math.prod(v["shape"]) for k, v in read[0].items()
                         if k != "__metadata__" and len(v["shape"]) == 2)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
    return total


def read_config(ref: ModelRef) -> SimpleNamespace | None:
    """A model's config.json as attributes (no transformers, no weights); None when there is none to read.

    A GGUF file's config is known once it has been converted (its cache directory)."""
    if not ref.local:
        return None
    d = Path(ref.path)
    if ref.gguf is not None:
        d = converted_path(Path(ref.gguf))
    try:
        data = json.loads((d / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return SimpleNamespace(**{k: v for k, v in data.items() if isinstance(k, str)}) if isinstance(data, dict) else None


__all__ = ["NotCached", "ModelRef", "with_gguf_converted", "download_command", "in_local_cache", "locate", "locate_pair", "from_pretrained", "load_weights",
           "read_config", "is_offline"]
