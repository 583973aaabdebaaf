"""Batch runs: one bound agent spec over every line of an inputs file, here or on Ray.

``toolcycle batch SPEC --tools MODULE --inputs in.jsonl --out out.jsonl`` and
:func:`run_batch` (docs/scaling.md). :mod:`.records` reads the inputs and keeps the output
file in input order and resumable; :mod:`.worker` builds the agent from a
:class:`BatchRecipe` and turns inputs into records; :mod:`.runner` drives them on asyncio or Ray.
"""

from .records import BatchFileError
from .runner import BatchReport, run_batch
from .worker import BatchRecipe

__all__ = ["BatchFileError", "BatchRecipe", "BatchReport", "run_batch"]
