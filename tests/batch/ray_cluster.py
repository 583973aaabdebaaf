"""Ray clusters for the batch tests, started and stopped by PID.

``local_ray``: ``ray.init(num_cpus=2)`` in the test process; ``TwoNodeCluster``: a head and a
second node started with ``ray start --block`` (each a process of its own whose children are
the node's raylet, GCS and workers), so a test can kill the second node's raylet by PID.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _parents() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command name) of every process, from /proc."""
    found: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        found[int(entry.name)] = (int(stat[stat.rindex(")") + 2:].split()[1]), name)
    return found


def processes_of(pid: int) -> dict[int, str]:
    """The process and all its descendants: pid -> command name."""
    table = _parents()
    family = {pid: table.get(pid, (0, "?"))[1]} if pid in table else {}
    grew = True
    while grew:
        grew = False
        for child, (parent, name) in table.items():
            if parent in family and child not in family:
                family[child] = name
                grew = True
    return family


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").exists() and " Z " not in Path(
        f"/proc/{pid}/stat").read_text()[:80]


def stop_tree(pid: int) -> None:
    """SIGTERM a process and its descendants, then SIGKILL whatever is left (by PID)."""
    family = processes_of(pid)
    for member in family:
        with contextlib.suppress(ProcessLookupError):
            os.kill(member, signal.SIGTERM)
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(_alive(m) for m in family):
        time.sleep(0.1)
    for member in family:
        if _alive(member):
            with contextlib.suppress(ProcessLookupError):
                os.kill(member, signal.SIGKILL)


class TwoNodeCluster:
    """``ray start --head`` (1 CPU) plus ``ray start --address`` (2 CPUs) on this machine;
    the test process is connected to it as a driver (``ray.init(address=...)``)."""

    def __init__(self, env: dict[str, str], second_env: dict[str, str] | None = None) -> None:
        self._auth_mode = os.environ.get("RAY_AUTH_MODE")
        os.environ["RAY_AUTH_MODE"] = "disabled"  # the driver, like the nodes (until stop)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        # loopback only, and `ray status` would need the head's token otherwise
        self.env = {**os.environ, "RAY_AUTH_MODE": "disabled", **env}
        common = ["--block", "--disable-usage-stats"]
        self.head = subprocess.Popen(
            [RAY, "start", "--head", "--node-ip-address=127.0.0.1", f"--port={self.port}",
             "--num-cpus=1", "--include-dashboard=false", *common],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.second: subprocess.Popen[bytes] | None = None
        try:
            self._wait_for_nodes(1)
            self.second = subprocess.Popen(
                [RAY, "start", f"--address={self.address}", "--node-ip-address=127.0.0.1",
                 "--num-cpus=2", f"--dashboard-agent-listen-port={free_port()}", *common],
                env={**self.env, **(second_env or {})}, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
            self._wait_for_nodes(2)
        except BaseException:
            self.stop()
            raise

    def _wait_for_nodes(self, count: int, timeout: float = 60) -> None:
        """The head: its GCS port answers; then the second node: the driver (connected to the
        cluster here, as the batch joins the Ray this process initialised) sees it alive."""
        import ray

        deadline = time.monotonic() + timeout
        while count == 1 and time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    ray.init(address=self.address, log_to_driver=False)
                    return
            time.sleep(0.2)
        while time.monotonic() < deadline:
            if sum(1 for node in ray.nodes() if node["Alive"]) >= count:
                return
            time.sleep(0.2)
        raise RuntimeError(f"the Ray cluster at {self.address} has not {count} nodes alive")

    def second_node_raylet(self) -> int:
        assert self.second is not None
        for pid, name in processes_of(self.second.pid).items():
            if name == "raylet":
                return pid
        raise RuntimeError("the second node has no raylet process")

    def stop(self) -> None:
        import ray

        ray.shutdown()
        if self._auth_mode is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = self._auth_mode
        for started in (self.second, self.head):
            if started is not None:
                stop_tree(started.pid)
