"""GGUF files, as users have them: converted once through transformers' GGUF support and kept in gammatune's cache.

Most small models people already have on disk are GGUF files (llama.cpp's
format, often quantised to 4 bits). transformers reads them (with the `gguf`
package): it rebuilds the tokenizer and chat template from the file and
dequantises the weights — about 30 s and 1.3 GB for a 135M model on two
cores. Paying that at every start would make a GGUF model the slowest thing
in the app, so the result is written once, as an ordinary model directory
(float32 safetensors, config, generation config, tokenizer with its chat
template), to `<cache>/gguf/<name>-<hash>/` (`resources.cache_root()`: the
bench traces' cache), keyed by the file's SHA-256; every later load reads
that directory in seconds, in whatever dtype the user asks for.

The hash is computed once per file version: a small memo maps (path, size,
modification time) to it, so a second start does not read the file again.
transformers marks a GGUF-loaded model "quantized with gguf" and refuses to
save it although its weights are already plain tensors; the marking is
cleared before saving. A file transformers cannot read (an architecture or
quantisation type it does not support) is one ModelLoadError line.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import importlib.util
import json
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ...errors import ModelLoadError
from ...resources import cache_root
from .damaged_weights import first_damaged

if TYPE_CHECKING:
    from transformers import PreTrainedModel

SUFFIX = ".gguf"
FORMAT = 1  # bump when the converted directory's layout changes: old ones are converted again
_MEMO = "hashes.json"


def gguf_dir() -> Path:
    """Where converted GGUF models are kept: `<gammatune cache>/gguf/`."""
    return cache_root() / "gguf"


def gguf_file_of(path: Path) -> Path | None:
    """The GGUF file a path names: the file itself, or the one *.gguf in a directory without a config.json.

    None when the path is neither; a directory with several GGUF files is a
    ModelLoadError that names them (which one is meant is the user's call).
    """
    if path.is_file():
        return path if path.suffix.lower() == SUFFIX else None
    if not path.is_dir() or (path / "config.json").is_file():
        return None
    found = sorted(p for p in path.iterdir() if p.suffix.lower() == SUFFIX and p.is_file())
    if len(found) > 1:
        names = ", ".join(p.name for p in found[:4]) + (" …" if len(found) > 4 else "")
        raise ModelLoadError(f"{str(path)!r} holds {len(found)} GGUF files ({names}): give the file itself")
    return found[0] if found else None


def _read_memo(memo: Path) -> dict[str, Any]:
    try:
        data = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def file_hash(path: Path) -> str:
    """SHA-256 of the file, streamed once per (path, size, mtime) and remembered in the cache."""
    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo = gguf_dir() / _MEMO
    known = _read_memo(memo)
    digest = known.get(key)
    if isinstance(digest, str) and len(digest) == 64:
        return digest
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        known = _read_memo(memo)   # another process may have added its own meanwhile
        known[key] = digest
        tmp = memo.with_name(f"{_MEMO}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known, indent=0), encoding="utf-8")
        os.replace(tmp, memo)
    except OSError:   # a read-only cache only costs the hash next time
        pass
    return digest


def converted_path(path: Path) -> Path:
    """The cache directory this GGUF file converts to (it may not exist yet)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in path.stem)[:60] or "model"
    return gguf_dir() / f"{stem}-{file_hash(path)[:16]}"


def is_converted(d: Path) -> bool:
    """A finished conversion: the marker written last, after the weights, config and tokenizer."""
    try:
        meta = json.loads((d / "gammatune-gguf.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    # a weight file cut short since (a full disk, a stray truncate) is no finished conversion: converted again
    return (isinstance(meta, dict) and meta.get("format") == FORMAT and (d / "config.json").is_file()
            and first_damaged(d) is None)


def need_gguf_package() -> None:
    if importlib.util.find_spec("gguf") is None:
        raise ModelLoadError("reading a GGUF file needs the gguf package: pip install gguf "
                             "(or pip install 'gammatune-tui[gguf]')")


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _clear_gguf_marking(model: PreTrainedModel) -> None:
    """transformers' 'quantized with gguf' marking: the weights are dequantised already, so saving is safe."""
    for attr, value in (("hf_quantizer", None), ("is_quantized", False), ("quantization_method", None)):
        if hasattr(model, attr):
            try:
                setattr(model, attr, value)
            except AttributeError:  # pragma: no cover - a read-only property in some release
                pass
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config


def _check_cache_writable(folder: Path, what: str, path: Path) -> None:
    """The cache folder the conversion will be saved in takes a file: proven before converting.

    `GAMMATUNE_CACHE_DIR=/etc/hostname run --pair smollm2` used to convert
    for 24 s and only then say the folder was unusable.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".probe-{os.getpid()}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ModelLoadError(f"{what} model {str(path)!r}: cannot keep the converted model in {folder} "
                             f"({_one_line(exc)}); set GAMMATUNE_CACHE_DIR to a writable folder") from None


def convert(path: Path, what: str = "target", progress: Callable[[str], None] | None = None) -> Path:
    """The converted directory for this GGUF file: from the cache, or converted now (and cached)."""
    out = converted_path(path)
    if is_converted(out):
        return out
    _check_cache_writable(out.parent, what, path)   # before the conversion's seconds, not after them
    need_gguf_package()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if progress is not None:
        progress(f"converting {path.name} (once; cached in {out.parent})")
    t0 = time.perf_counter()
    folder, name = str(path.parent), path.name
    try:
        # transformers draws its own tqdm bar for the dequantisation whatever its progress-bar setting;
        # on a running Textual screen (or before `run`'s answer) it is noise over the output
        with contextlib.redirect_stderr(io.StringIO()):
            tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    except (ImportError, MemoryError):
        raise
    except Exception as exc:   # an architecture or quantisation type transformers cannot read, a broken file
        raise ModelLoadError(f"{what} model {str(path)!r}: transformers cannot read this GGUF file "
                             f"({_one_line(exc)})") from None
    _clear_gguf_marking(model)
    tmp = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        meta = {"format": FORMAT, "source": str(path.resolve()), "sha256": file_hash(path),
                "convert_s": round(time.perf_counter() - t0, 2)}
        (tmp / "gammatune-gguf.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
        if is_converted(out):   # another process converted the same file meanwhile: theirs is in use, keep it
            shutil.rmtree(tmp, ignore_errors=True)
            return out
        if out.exists():   # a stale or half-written one (an older format)
            shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelLoadError(f"{what} model {str(path)!r}: could not write the converted model to {out.parent} "
                             f"({_one_line(exc)}); set GAMMATUNE_CACHE_DIR to a writable folder") from None
    finally:
        del model
    return out


__all__ = ["SUFFIX", "gguf_dir", "gguf_file_of", "file_hash", "converted_path", "is_converted", "convert",
           "need_gguf_package"]
