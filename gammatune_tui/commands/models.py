"""`gammatune models`: the preset pairs and the embedded demo pair, what is on this machine, and which model
families decode exactly (`--families`).

Checking the local Hugging Face cache (and whether a packaged model such as
smollm2 is installed) never touches the network, so this command is instant
and works offline. Every name it lists is accepted by `--pair`. The family
verdicts are read from the family matrix's record (engine/loading/families.py,
the same record docs/models.md shows), not measured here: no torch is loaded.
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from ..engine.loading import families as fam
from ..engine.common.mtp_families import head_families
from ..engine.loading.model_files import download_command, in_local_cache
from ..engine.loading import presets
from ..engine.loading.presets import INSTALL_HINT, PRESETS, Preset
from ..resources import demo_pair_dir, demo_pair_installed
from ..render.console import make_console
from ..render.table_fit import set_keys
from ..render.safe_text import printable


def _dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else 0


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def _safetensors_params(path: Path) -> int:
    """Parameters in a .safetensors file, from its JSON header alone (no torch, no weights read)."""
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    return sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")


def _demo_params(root: Path) -> tuple[str, str]:
    out = []
    for sub in ("target", "draft"):
        try:
            out.append(f"{_safetensors_params(root / sub / 'model.safetensors') / 1e6:.2f}M")
        except (OSError, ValueError, KeyError, TypeError, struct.error):
            out.append("?")
    return out[0], out[1]


def _preset_row(p: Preset) -> dict:
    """One preset as `models` shows it: hub pairs say what is cached, a packaged model whether it is installed."""
    row: dict[str, Any] = {
        "name": p.name, "target": p.target,
        "draft": p.draft if p.draft is not None else (presets.preset_drafter(p.name, None) or "").replace("-", " "),
        "target_precision": p.target_precision, "draft_precision": p.draft_precision,
        "target_params": p.target_params, "draft_params": p.draft_params,
        "target_size": p.target_size, "draft_size": p.draft_size,
        "quantize": p.quantize, "prompt_format": "vicuna" if p.vicuna else "chat template", "note": p.note,
    }
    if p.from_package:
        f = presets.package_file(p)
        row.update(installed=f is not None, path=str(f) if f is not None else None, target_cached=f is not None,
                   draft_cached=True, download=INSTALL_HINT.format(req=p.package))
    else:
        row.update(target_cached=in_local_cache(p.target), draft_cached=in_local_cache(p.draft or ""),
                   download=download_command([p.target, p.draft or ""]))
    return row


def _family_rows() -> list[dict]:
    return [{"family": f.name, "kind": f.kind, "verdict": fam.verdict(f.name), "not_exact": fam.not_exact(f.name)}
            for f in fam.FAMILIES]


def _print_families(json_out: bool) -> None:
    """The family matrix's verdicts: one row a family, and why a path is not exact."""
    rows, version = _family_rows(), fam.support()["transformers"]
    if json_out:
        print(json.dumps({"transformers": version, "paths": list(fam.PATHS), "families": rows,
                          "mtp_heads": head_families()}, ensure_ascii=False))
        return
    console = make_console()
    table = Table(title=f"model families (checked with transformers {version}; docs/models.md)",
                  title_justify="left", show_edge=False, pad_edge=False)
    for col in ("family", "kind", "greedy output", "not exact on"):
        table.add_column(col, justify="left", no_wrap=True)
    styles = {"exact": "green", "refused": "yellow", "partly exact": "yellow", "fails": "red", "untested": "dim"}
    reasons: list[str] = []
    for r in rows:
        paths = list(r["not_exact"])
        where = "every path" if len(paths) == len(fam.applicable(r["family"])) else ", ".join(paths)
        table.add_row(r["family"], r["kind"], Text(r["verdict"], style=styles[r["verdict"]]), where)
        for why in dict.fromkeys(r["not_exact"].values()):   # each reason once, in path order
            reasons.append(f"{r['family']}: {why}")
    console.print(table)
    for line in reasons:
        console.print(Text(printable(line), style="dim"), soft_wrap=not console.is_terminal)
    console.print(Text("exact: token for token the family's own generate, with a draft model, self:int8, self:int4, "
                       "prompt lookup, its MTP head where it ships one, and gammatune_tui.hf.generate (a tiny model "
                       "of each family, checked by "
                       "`python tests/families/family_matrix.py`). A family not listed is untested.", style="dim"),
                  soft_wrap=not console.is_terminal)
    console.print(Text(f"MTP heads (--draft mtp, docs/heads.md), read from the checkpoints of: "
                       f"{', '.join(head_families())}", style="dim"), soft_wrap=not console.is_terminal)


def models(json_out: bool = typer.Option(False, "--json", help="Print the list as JSON."),
           families: bool = typer.Option(False, "--families",
                                         help="List the model families instead: which decode exactly, which are "
                                              "refused and why.")) -> None:
    """List the preset pairs (--pair NAME), their sizes and whether they are in the local HF cache."""
    if families:
        _print_families(json_out)
        return
    rows = [_preset_row(p) for p in PRESETS.values()]
    root = demo_pair_dir()
    installed = demo_pair_installed(root)
    demo = {"name": "demo", "default": True, "path": str(root), "installed": installed}
    if installed:
        tp, dp = _demo_params(root)
        demo.update(target_params=tp, draft_params=dp,
                    target_size=_mb(_dir_size(root / "target")), draft_size=_mb(_dir_size(root / "draft")))
    if json_out:
        print(json.dumps({"presets": rows, "demo": demo}, ensure_ascii=False))
        return

    console = make_console()
    table = Table(title="model pairs (gammatune … --pair NAME)", title_justify="left", show_edge=False,
                  pad_edge=False, show_lines=True)
    for col in ("pair", "role", "model", "params", "precision", "weights", "cached", "prompts"):
        table.add_column(col, justify="left", no_wrap=True)   # never cut: the console splits a table too wide

    def mark(flag: bool) -> Text:
        return Text("yes", style="green") if flag else Text("no", style="dim")

    def two(a: object, b: object) -> Text:
        t = Text()
        t.append_text(a if isinstance(a, Text) else Text(str(a)))
        t.append("\n")
        t.append_text(b if isinstance(b, Text) else Text(str(b)))
        return t

    for r in rows:
        tparams = r["target_params"] + (f" ({r['quantize']})" if r["quantize"] else "")
        if "installed" in r:   # a model a package ships: installed or not, and no draft model of its own
            state = Text("installed", style="green") if r["installed"] else Text("not installed", style="dim")
            table.add_row(r["name"], two("target", "draft"), two(r["target"], r["draft"]),
                          two(tparams, r["draft_params"]), two(r["target_precision"], r["draft_precision"]),
                          two(r["target_size"], r["draft_size"]), two(state, "–"), r["prompt_format"])
            continue
        table.add_row(r["name"], two("target", "draft"), two(r["target"], r["draft"]),
                      two(tparams, r["draft_params"]), two(r["target_precision"], r["draft_precision"]),
                      two(r["target_size"], r["draft_size"]),
                      two(mark(r["target_cached"]), mark(r["draft_cached"])), r["prompt_format"])
    if installed:
        # named as run's header names them; where they live goes under the table (a long path widened it)
        table.add_row(Text("demo", style="bold"), two("target", "draft"), two("demo/target", "demo/draft"),
                      two(demo["target_params"], demo["draft_params"]), two("--dtype", "--dtype"),
                      two(demo["target_size"], demo["draft_size"]), Text("embedded", style="green"),
                      "raw")
    else:
        table.add_row(Text("demo", style="bold"), "", Text(printable(str(root))), "–", "–", "–",
                      Text("not installed", style="red"), "raw")
    console.print(set_keys(table, 2))   # split at 80 columns: every part keeps the pair and the role
    console.print(Text("cached: found in the local Hugging Face cache (checked without network). Fetch a pair "
                       "with `hf download TARGET && hf download DRAFT` while online, or add --download to the "
                       "command that uses it.", style="dim"), soft_wrap=not console.is_terminal)
    console.print(Text("precision: a model loads at --dtype (auto: bfloat16 or float16 on a GPU; on a CPU "
                       "bfloat16 for a model of 64 MB+ where the CPU has AVX512-BF16 or AMX, else float32). Any "
                       "target can draft with a copy of itself built at load: --draft "
                       "self:int4 (4-bit groups of 32: about 1/6 of its float32 Linear weights added), self:int8 "
                       "(about 1/4), self:bf16 (1/2); the embedding is shared.", style="dim"), soft_wrap=False)
    if installed:
        # wrapped at the console's width like the lines above: a checkout's path is as long as its folder
        console.print(Text(f"demo: embedded in the package, in {printable(str(root))}", style="dim"), soft_wrap=False)
    counts: dict[str, int] = {}
    for r in _family_rows():
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    console.print(Text(f"model families: {', '.join(f'{n} {v}' for v, n in counts.items())} "
                       "(gammatune models --families)", style="dim"), soft_wrap=False)
    hub = [p for p in rows if "installed" not in p]
    missing = [r for p in hub for r, ok in ((p["target"], p["target_cached"]), (p["draft"], p["draft_cached"]))
               if not ok]
    if missing and len(missing) < 2 * len(hub):
        console.print(Text(f"not cached: {download_command(missing)}", style="dim"), soft_wrap=not console.is_terminal)
    for p in rows:
        if "installed" in p and not p["installed"]:
            console.print(Text(f"{p['name']} is not installed: {p['download']}", style="dim"), soft_wrap=not console.is_terminal)


def register(app: typer.Typer) -> None:
    app.command("models", help="List the preset model pairs, their sizes and whether they are cached locally.")(models)
