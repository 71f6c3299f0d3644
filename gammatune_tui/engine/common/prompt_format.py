"""The Vicuna v1.1 chat format the paper's pairs were trained on (its Fig. 2b system prompt).

Beside the pair type, which formats prompts with it (`ModelPair.encode_prompt`),
and below the presets that choose it (loading/presets.py).
"""

from __future__ import annotations

from typing import Sequence

VICUNA_SYSTEM = (
    "A chat between a curious user and an artificial intelligence assistant. "
    "The assistant gives helpful, detailed, and polite answers to the user's questions."
)


def vicuna_format(messages: Sequence[dict]) -> str:
    """Vicuna v1.1 template: system prompt, then 'USER: … ASSISTANT: …</s>' turns."""
    system = VICUNA_SYSTEM
    parts: list[str] = []
    for m in messages:
        role, content = m["role"], m["content"].strip()
        if role == "system":
            system = content
        elif role == "user":
            parts.append(f"USER: {content}")
        else:
            parts.append(f"ASSISTANT: {content}</s>")
    return system + " " + " ".join(parts) + " ASSISTANT:"


__all__ = ["VICUNA_SYSTEM", "vicuna_format"]
