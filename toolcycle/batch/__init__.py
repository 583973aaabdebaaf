"""Batch runs: one bound agent spec over every line of an inputs file, here or on Ray.

``toolcycle batch SPEC --tools MODULE --inputs in.jsonl --out out.jsonl`` and
:func:`run_batch` (docs/scaling.md). :mod:`.inputs` reads the input lines (a bad one is a
``malformed`` record); :mod:`.journal` locks the output and appends each record as its run
ends; :mod:`.records` reads the output back (the latest record per input, in input order);
:mod:`.approvals` holds a person's decisions for paused inputs; :mod:`.worker` builds the
agent from a :class:`BatchRecipe` and turns inputs into records; :mod:`.runner` drives them on
asyncio or Ray.
"""

from .approvals import ApprovalRule, BatchApprovals
from .inputs import BatchFileError
from .journal import BatchLockedError
from .records import read_records
from .runner import BatchReport, run_batch
from .worker import BatchRecipe

__all__ = ["ApprovalRule", "BatchApprovals", "BatchFileError", "BatchLockedError",
           "BatchRecipe", "BatchReport", "read_records", "run_batch"]
