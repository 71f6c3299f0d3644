"""Indexed devices: `cuda` means `cuda:{current}`, devices compare by type and index, and a sampled
draw never crosses to the CPU when generator and tensors share a device under two spellings.

No CUDA is needed: the CUDA runtime's answers are injected, and a CUDA tensor and generator are
stood in for by CPU objects that report a CUDA device (issue 18, B1: `torch.Generator(device="cuda")`
reports `cuda`, the tensors `cuda:0`, and the old `!=` sent every sampled CUDA draw to the CPU).
"""

from __future__ import annotations

import pytest
import torch

from gammatune_tui.engine.common import devices
from gammatune_tui.engine.common import sampling
from gammatune_tui.engine.common.devices import indexed, resolve_device, same_device
from gammatune_tui.errors import InvalidParameter


@pytest.fixture
def two_gpus(monkeypatch):
    """A machine with cuda:0 and cuda:1, whose current device is 1."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(devices, "_current_cuda_index", lambda: 1)


def test_cuda_devices_are_resolved_with_their_index(two_gpus):
    assert resolve_device("auto") == torch.device("cuda", 1)
    assert resolve_device("cuda") == torch.device("cuda", 1)
    assert resolve_device("cuda:0") == torch.device("cuda", 0)
    with pytest.raises(InvalidParameter, match=r"'cuda:2'.*2 CUDA device"):
        resolve_device("cuda:2")
    assert resolve_device("cpu") == torch.device("cpu")


def test_same_device_compares_type_and_index(two_gpus):
    assert same_device("cuda", "cuda:1") and same_device(torch.device("cuda", 1), "cuda")
    assert not same_device("cuda", "cuda:0") and not same_device("cuda:0", "cpu")
    assert same_device("cpu", torch.device("cpu", 0))
    assert indexed("cuda") == torch.device("cuda", 1) and indexed("cpu") == torch.device("cpu")


class _GeneratorOn(torch.Generator):
    """A CPU generator that reports another device (what `torch.Generator(device="cuda")` reports)."""

    reported = torch.device("cuda")

    @property
    def device(self):  # type: ignore[override]
        return self.reported


class _OnCuda0(torch.Tensor):
    """A CPU tensor that reports cuda:0 (what every tensor on the first GPU reports)."""

    @property
    def device(self):  # type: ignore[override]
        return torch.device("cuda", 0)


def test_a_sampled_draw_stays_on_the_device_whatever_its_spelling(monkeypatch):
    monkeypatch.setattr(devices, "_current_cuda_index", lambda: 0)
    drawn_on_device = []

    def on_device(probs, generator):  # the CUDA draw (exponential race), run here on the CPU tensor
        drawn_on_device.append(probs.device)
        return torch.multinomial(probs.as_subclass(torch.Tensor), 1, generator=generator).squeeze(-1)

    monkeypatch.setattr(sampling, "sample_without_sync", on_device)
    gen = _GeneratorOn()
    gen.manual_seed(0)
    probs = torch.tensor([[0.0, 1.0, 0.0]]).as_subclass(_OnCuda0)
    # before the fix: "cuda" != "cuda:0", so the draw went through the CPU and back
    # (`.to("cuda:0")`, a crash here and a host round trip per token on a GPU)
    assert sampling.sample(probs, gen).tolist() == [1]
    assert drawn_on_device == [torch.device("cuda", 0)]


def test_the_session_generator_is_made_on_the_indexed_device(monkeypatch):
    made = []
    monkeypatch.setattr(devices, "_current_cuda_index", lambda: 0)

    real = torch.Generator

    class Spy(real):
        def __new__(cls, device="cpu"):
            made.append(torch.device(device))
            return real.__new__(cls)

        def __init__(self, device="cpu"):
            super().__init__()

    monkeypatch.setattr(sampling.torch, "Generator", Spy)
    sampling.make_generator(0, "cuda")
    assert made == [torch.device("cuda", 0)]


def test_a_generator_on_the_cpu_still_serves_a_device_without_its_own(monkeypatch):
    """Backends without device generators draw on the CPU, and the token comes back to the tensors' device."""
    gen = torch.Generator().manual_seed(0)
    probs = torch.tensor([[0.0, 0.0, 1.0]])
    assert sampling.sample(probs, gen).tolist() == [2]
    assert sampling.uniforms(3, gen, torch.device("cpu")).shape == (3,)
