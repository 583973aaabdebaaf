"""One Ray session for a batch or an experiment: import Ray or say how to get it, join the
cluster given or start a local one, and shut down only what this call started.

Batches and evals both fan work out over Ray; they share this so that the rules (a session
already started by the caller is reused and left running; a local one gets no dashboard and
keeps workers' logs out of the driver's terminal) are written once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from ..errors import ConfigurationError


@contextmanager
def ray_session(address: str | None, workers: int | None, *, option: str,
                subject: str) -> Iterator[ModuleType]:
    """Yield the ``ray`` module with a session open: ``address`` joins that cluster, ``None``
    starts a local Ray with ``workers`` CPUs, and a session already open is used as it is.
    ``option`` names the setting that asked for Ray in the error a missing Ray raises."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigurationError([f"{option} needs Ray: pip install 'toolcycle[ray]'"],
                                 subject=subject) from exc
    own = not ray.is_initialized()
    if own:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False)
    try:
        yield ray
    finally:
        if own:
            ray.shutdown()
