"""The family matrix: every model family of engine/loading/families.py, decoded greedily on every draft path.

    python tests/families/family_matrix.py            # run it; write family_support.json and docs/models.md's table
    python tests/families/family_matrix.py --check    # run it; exit 1 if either file disagrees with the code
    python tests/families/family_matrix.py --init-range 0.8   # larger logits; print what is not exact, write nothing

Why: "works with Llama" says little about Jamba or Gemma 3n. Each family's
tiny random model (two layers, 64 wide, the demo tokenizer's 4,096 ids) is
built once, in this process, and decoded a few tokens greedily on each path —
a same-family draft model, `self:int8`, `self:int4`, prompt lookup, and
`gammatune_tui.hf.generate` — against the family's own `generate`. A cell is
`exact`, or one line saying why not: `refused: …` (gammatune's own one-line
refusal), `differs: …` (a token other than `generate`'s) or `error: …` (an
exception that is not a refusal: a bug). tests/families/ runs the same matrix
and fails when the recorded files disagree with what the code does.

It lives beside that test (not in benchmarks/) because the test imports it: a
plain import, not a file loaded by its path, and a maintainer's tool that
rewrites docs/, so not part of the installed package either.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gammatune_tui.engine.loading import families as fam  # noqa: E402
from gammatune_tui.engine.common.names import SOURCES  # noqa: E402

DOC = ROOT / "docs" / "models.md"
BEGIN, END = "<!-- family-matrix:begin -->", "<!-- family-matrix:end -->"
PROMPTS = ("def add(a, b):\n    return a + b\n\ndef add(a, b):\n    return",
           "import os\nimport sys\n\ndef main():\n    path = sys.argv[1]\n    for name in os.listdir(path):\n"
           "        print(name)\n")
"""Every path is checked on each: one prompt can pass by luck (zamba2 matched `generate` on the first and left
it at token 3 of the second, issue 40); the first repeats itself, so prompt lookup finds something to copy."""
N_TOKENS = 8
PATH_TITLES = {"draft": "draft model", "self:int8": "self:int8", "self:int4": "self:int4",
               "prompt-lookup": "prompt lookup", "mtp": "mtp head", "hf.generate": "hf.generate"}


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _cell(run: Callable[[], list[tuple[list[int], list[int]]]]) -> str:
    """Run one path on every prompt: "exact", or why not, in one line."""
    from gammatune_tui.errors import GammatuneError

    try:
        results = run()
    except GammatuneError as e:
        return "refused: " + _one_line(e, 400)
    except Exception as e:   # a bug to fix, recorded as such rather than stopping the matrix
        return f"error: {type(e).__name__}: " + _one_line(e, 120)
    for n, (got, want) in enumerate(results, 1):
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            return f"differs: the first token that is not generate's is number {at} of {len(want)} on prompt {n}"
    return "exact"


def _same_family_draft(target: Any, seed: int) -> Any:
    """The target with noise on its output layer: a draft of the same family that agrees often, not always."""
    import torch

    draft = copy.deepcopy(target)
    out = draft.get_output_embeddings()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        w = out.weight
        w.add_(torch.randn(w.shape, generator=g) * 0.3 * w.std())
    return draft


NO_HEAD = "n/a: ships no MTP head"


def _with_head(name: str, seed: int, folder: Path, **overrides: Any) -> Any:
    """The family's tiny target with a one-layer MTP head, written as a real checkpoint in the family's own layout
    (engine/common/mtp_families.py; as tests/tiny_mtp.py writes its three fixtures) and loaded back, as
    `--draft mtp` reads a released one: a target one layer deeper is saved, and that layer moves under the head's
    names beside its norms and projection."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import AutoModelForCausalLM

    from gammatune_tui.engine.common.mtp_families import FAMILY_LAYOUT

    base = fam.tiny_config(name, **overrides)
    text = base.get_text_config()
    layout = FAMILY_LAYOUT[text.model_type]
    n = int(text.num_hidden_layers)
    deeper: dict[str, Any] = {"num_hidden_layers": n + 1}
    for key, extra in (("layer_types", "full_attention"), ("mlp_layer_types", "sparse")):
        if getattr(text, key, None):
            deeper[key] = list(getattr(text, key))[:n] + [extra]
    torch.manual_seed(seed)
    AutoModelForCausalLM.from_config(fam.tiny_config(name, **{**overrides, **deeper})).save_pretrained(folder)
    state = load_file(str(folder / "model.safetensors"))
    block = next(k for k in state if f"layers.{n}." in k).split(f"layers.{n}.")[0] + f"layers.{n}."
    names = {"mtp": ("mtp.layers.0.", "mtp.pre_fc_norm_embedding.", "mtp.pre_fc_norm_hidden.", "mtp.norm.", "mtp.fc."),
             "layers": (block, block + "enorm.", block + "hnorm.", block + "shared_head.norm.", block + "eh_proj."),
             "mimo": ("model.mtp_layers.0.", "model.mtp_layers.0.token_layernorm.",
                      "model.mtp_layers.0.hidden_layernorm.", "model.mtp_layers.0.final_layernorm.",
                      "model.mtp_layers.0.input_proj.")}[layout]
    out = {(names[0] + k[len(block):] if k.startswith(block) else k): t for k, t in state.items()}
    norm = state[block + "input_layernorm.weight"]
    hidden = int(norm.shape[0])
    for prefix in names[1:4]:
        out[prefix + "weight"] = norm.clone()
    out[names[4] + "weight"] = torch.randn(hidden, 2 * hidden, generator=torch.Generator().manual_seed(seed)) * 0.1
    save_file(out, str(folder / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((folder / "config.json").read_text())
    inner = cfg.get("text_config", cfg)
    inner.update({k: (v[:n] if isinstance(v, list) else n) for k, v in deeper.items()})
    (folder / "config.json").write_text(json.dumps(cfg, indent=1))
    model = AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    gen = model.generation_config
    gen.bos_token_id, gen.eos_token_id, gen.pad_token_id = base.bos_token_id, base.eos_token_id, base.pad_token_id
    return model


def run_family(name: str, tokenizer: Any, **overrides: Any) -> dict[str, Any]:
    """{path: cell} for one family, plus what its self-drafts keep at the target's precision; `overrides` change
    its tiny config (a wider initializer_range: larger logits)."""
    import torch

    from gammatune_tui.engine import PolicySettings, SamplingConfig, SpeculativeDecoder, StepEvent
    from gammatune_tui.engine.loading.models import ModelPair
    from gammatune_tui.hf import generate as hf_generate

    if not fam.installed(name):
        return {"skipped": "not in this transformers"}
    try:
        target = fam.tiny_model(name, seed=1, **overrides)
        draft = _same_family_draft(target, seed=2)
    except Exception as e:
        return {"skipped": f"its tiny model does not build: {type(e).__name__}: {_one_line(e, 120)}"}
    prompts = [list(tokenizer(p).input_ids) for p in PROMPTS]
    out: dict[str, Any] = {}
    pair: list[Any] = []

    def reference(ids: list[int]) -> list[int]:
        x = torch.tensor([ids])
        eos = list(pair[0].eos_ids) if pair else [1]
        return target.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=N_TOKENS,
                               eos_token_id=eos)[0, len(ids):].tolist()

    def engine(drafter: str | None) -> Callable[[], list[tuple[list[int], list[int]]]]:
        def run() -> list[tuple[list[int], list[int]]]:
            if not pair:
                pair.append(ModelPair(target=target, draft=draft, tokenizer=tokenizer, device=torch.device("cpu"),
                                      dtype=torch.float32, name_target=name, name_draft=f"{name}-draft"))
            found = []
            for ids in prompts:
                dec = SpeculativeDecoder(pair[0], PolicySettings.build("specdecode", 3), SamplingConfig(),
                                         drafter=drafter)
                events = list(dec.generate(ids, max_new_tokens=N_TOKENS))
                if drafter == "self:int8":
                    out["self-draft precision"] = events[0].draft_precision
                got = [t.id for e in events if isinstance(e, StepEvent) for t in e.emitted]
                found.append((got, reference(ids)))
            return found
        return run

    def hf() -> list[tuple[list[int], list[int]]]:
        found = []
        for ids in prompts:
            x = torch.tensor([ids])
            want = target.generate(x, do_sample=False, max_new_tokens=N_TOKENS)
            got = hf_generate(target, x, draft_model=draft, do_sample=False, max_new_tokens=N_TOKENS,
                              tokenizer=tokenizer)
            found.append((got[0, len(ids):].tolist(), want[0, len(ids):].tolist()))
        return found

    def head() -> list[tuple[list[int], list[int]]]:
        import tempfile

        from gammatune_tui.engine.drafting.draft_sources import DrafterSettings

        with tempfile.TemporaryDirectory(prefix="matrix-mtp-") as folder:
            model = _with_head(name, 1, Path(folder), **overrides)
            own = ModelPair(target=model, draft=None, tokenizer=tokenizer, device=torch.device("cpu"),
                            dtype=torch.float32, name_target=name, name_draft="mtp")
            found = []
            for ids in prompts:
                dec = SpeculativeDecoder(own, PolicySettings.build("specdecode", 3), SamplingConfig(),
                                         drafter=DrafterSettings("mtp"))
                got = [t.id for e in dec.generate(ids, max_new_tokens=N_TOKENS) if isinstance(e, StepEvent)
                       for t in e.emitted]
                x = torch.tensor([ids])
                want = model.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=N_TOKENS,
                                      eos_token_id=list(own.eos_ids))[0, len(ids):].tolist()
                found.append((got, want))
            return found

    runs = {**{s.matrix_column: engine(None if s.loads_draft else s.name) for s in SOURCES if s.matrix_column},
            **{d: engine(d) for d in fam.MATRIX_SELF_DRAFTS}, "hf.generate": hf, "mtp": head}
    for path in fam.PATHS:
        out[path] = NO_HEAD if path == "mtp" and not carries_head(target) else _cell(runs[path])
    return out


def carries_head(model: Any) -> bool:
    """Whether the family ships an MTP head gammatune reads (engine/common/mtp_families.py)."""
    from gammatune_tui.engine.common.mtp_families import FAMILY_LAYOUT

    return model.config.get_text_config().model_type in FAMILY_LAYOUT


def demo_tokenizer() -> Any:
    from transformers import AutoTokenizer

    from gammatune_tui.resources import demo_pair_dir

    return AutoTokenizer.from_pretrained(str(demo_pair_dir() / "target"))


def run_matrix(names: list[str] | None = None, progress: Callable[[str, float], None] | None = None,
               **overrides: Any) -> dict:
    """The whole matrix, in the shape of family_support.json (`overrides`: of every tiny config)."""
    import transformers

    tok = demo_tokenizer()
    found = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        verbosity = transformers.logging.get_verbosity()
        transformers.logging.set_verbosity_error()
        try:
            for f in fam.FAMILIES:
                if names is None or f.name in names:
                    t0 = time.perf_counter()
                    found[f.name] = run_family(f.name, tok, **overrides)
                    if progress:
                        progress(f.name, time.perf_counter() - t0)
        finally:
            transformers.logging.set_verbosity(verbosity)
    return {"transformers": transformers.__version__, "paths": list(fam.PATHS), "families": found}


def render_table(support: dict) -> str:
    """docs/models.md's table: one row a family, one column a path; reasons in full below it."""
    head = ["family", "kind", *(PATH_TITLES.get(p, p) for p in fam.PATHS), "self-draft keeps"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes: list[str] = []
    for f in fam.FAMILIES:
        cells = support["families"].get(f.name)
        if cells is None:
            continue
        if "skipped" in cells:
            lines.append(f"| {f.name} | {f.kind} | " + " | ".join(["skipped"] * len(fam.PATHS))
                         + f" | {cells['skipped']} |")
            continue
        row = []
        for p in fam.PATHS:
            v = cells[p]
            if v == "exact":
                row.append("exact")
            elif v.startswith("n/a"):
                row.append("—")
            else:
                word, _, why = v.partition(": ")
                if why not in notes:
                    notes.append(why)
                row.append(f"{word} [{notes.index(why) + 1}]")
        keeps = cells.get("self-draft precision", "")
        keeps = keeps.split(", ", 1)[1].rsplit(" kept", 1)[0].replace("+", ", ") if " kept " in keeps else "–"
        lines.append(f"| {f.name} | {f.kind} | " + " | ".join(row) + f" | {keeps} |")
    lines.append("")
    lines += [f"{i}. {why.replace('|', '/')}" for i, why in enumerate(notes, 1)]
    return "\n".join(lines).rstrip() + "\n"


def doc_with_table(doc: str, support: dict) -> str:
    """docs/models.md with the part between the markers replaced by the table of `support`."""
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    stamp = f"\n_Measured with transformers {support['transformers']}._\n\n"
    return doc[:start] + stamp + render_table(support) + "\n" + doc[end:]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the recorded files instead of writing them")
    ap.add_argument("--init-range", type=float, metavar="X",
                    help="build every tiny model with initializer_range X (larger logits) and print the cells "
                         "that are not exact, writing nothing: a harder re-check of the recorded verdicts")
    ap.add_argument("--families", metavar="A,B", help="only these families (with --init-range)")
    args = ap.parse_args(argv)
    if args.init_range is not None:
        names = args.families.split(",") if args.families else None
        found = run_matrix(names, progress=lambda n, s: print(f"{n:<18} {s:5.1f} s", file=sys.stderr),
                           initializer_range=args.init_range)["families"]
        for name, cells in found.items():
            for path in fam.PATHS:
                if cells.get(path, "exact") != "exact":
                    print(f"{name:<18} {path:<14} {cells[path]}")
        return 0
    support = run_matrix(progress=lambda n, s: print(f"{n:<18} {s:5.1f} s", file=sys.stderr))
    text = json.dumps(support, indent=1, ensure_ascii=False) + "\n"
    doc = doc_with_table(DOC.read_text(encoding="utf-8"), support)
    if args.check:
        same = fam.SUPPORT_FILE.read_text(encoding="utf-8") == text and DOC.read_text(encoding="utf-8") == doc
        print("the recorded matrix agrees with the code" if same else
              "the recorded matrix disagrees with the code: run python tests/families/family_matrix.py")
        return 0 if same else 1
    fam.SUPPORT_FILE.write_text(text, encoding="utf-8")
    DOC.write_text(doc, encoding="utf-8")
    print(f"wrote {fam.SUPPORT_FILE.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
