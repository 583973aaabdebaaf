"""A throwaway PostgreSQL cluster for tests: a real server, started and stopped by the tests.

The PostgreSQL stores are tested against Debian's own server binaries (``initdb``,
``pg_ctl``, ``postgres``), never a mock: a cluster is created in a fresh temporary folder,
listens on a free 127.0.0.1 port with ``trust`` authentication, and is stopped (``pg_ctl
stop``, then the postmaster's PID if that fails) and deleted at the end of the session.

Why the server runs as another user: PostgreSQL refuses to run as root (``initdb`` and
``postgres`` both exit with "cannot be run as root", because a server bug would then own the
machine). The tests run as root on CI machines and containers, so when the effective uid is
0 the binaries are started as an unprivileged account -- ``$TOOLCYCLE_PG_OS_USER`` if set,
else ``postgres`` (Debian's ``postgresql`` package creates it), else ``nobody`` -- through
:func:`subprocess.Popen`'s ``user``/``group``/``extra_groups`` (no ``sudo``/``runuser``
needed), and the cluster's folder is made by root under the system temp folder (which every
user can traverse, unlike pytest's ``/tmp/pytest-of-root``) and handed to that account.
Clients (the stores under test) connect over TCP, so they may stay root.

Settings favour speed over durability, which a throwaway cluster does not need:
``fsync=off``, ``synchronous_commit=off``, ``full_page_writes=off``; ``initdb --no-sync``.

The binaries are looked up on ``PATH`` and under ``/usr/lib/postgresql/*/bin`` (Debian's
layout, newest version first); ``make postgres`` installs Debian's ``postgresql`` package
when neither has them. When they are missing the fixture *fails* with that instruction: the
tests must never be skipped silently.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

SUPERUSER = "toolcycle"
_START_TRIES = 3
_STOP_TIMEOUT_S = 30


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL server binaries are not installed (run ``make postgres``)."""


def find_bin_dir() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``: PATH first, then Debian's."""
    on_path = shutil.which("pg_ctl")
    if on_path is not None:
        folder = Path(on_path).resolve().parent
        if (folder / "initdb").exists() and (folder / "postgres").exists():
            return folder
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.name)] or [0],
        reverse=True,
    )
    for folder in candidates:
        if all((folder / name).exists() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) were found neither on PATH nor "
        "under /usr/lib/postgresql/*/bin; run `make postgres` (installs Debian's `postgresql` "
        "package) and try again."
    )


def _server_account() -> tuple[int, int] | None:
    """(uid, gid) to run the server as, or None when we are not root and can run it ourselves."""
    if os.geteuid() != 0:
        return None
    wanted = os.environ.get("TOOLCYCLE_PG_OS_USER")
    names = [wanted] if wanted else ["postgres", "nobody"]
    for name in names:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid != 0:
            return entry.pw_uid, entry.pw_gid
    raise PostgresUnavailable(
        f"running as root, and none of the accounts {names} exists (or it is root); PostgreSQL "
        "refuses to run as root. Set TOOLCYCLE_PG_OS_USER to an unprivileged account."
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """One running throwaway cluster; :meth:`start` it, :meth:`stop` it (idempotent)."""

    def __init__(self) -> None:
        self.bin_dir = find_bin_dir()
        self.account = _server_account()
        self.root = Path(tempfile.mkdtemp(prefix="toolcycle-pg-"))
        self.data = self.root / "data"
        self.port = 0
        self.log = self.root / "server.log"
        self._running = False
        self._shared_database = False

    @property
    def url(self) -> str:
        """A URL of the cluster's default ``postgres`` database (as the superuser)."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{name}"

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a server binary as the server's account (see the module docstring for why)."""
        uid, gid = self.account if self.account is not None else (None, None)
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]], check=check, capture_output=True,
            text=True, cwd=self.root, timeout=120, user=uid, group=gid,
            extra_groups=[] if uid is not None else None,
        )

    def start(self) -> PostgresCluster:
        if self.account is not None:
            os.chown(self.root, *self.account)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                  "--locale=C", "--no-sync", "--no-instructions")
        for attempt in range(_START_TRIES):
            self.port = _free_port()  # freed again before postgres binds it: retried if taken
            options = (f"-c port={self.port} -c listen_addresses=127.0.0.1 "
                       f"-c unix_socket_directories={self.root} -c fsync=off "
                       "-c synchronous_commit=off -c full_page_writes=off "
                       "-c max_connections=200 -c shared_buffers=32MB")
            done = self._run("pg_ctl", "start", "-D", str(self.data), "-l", str(self.log),
                             "-w", "-t", "60", "-o", options, check=False)
            if done.returncode == 0:
                self._running = True
                return self
            if attempt == _START_TRIES - 1:
                log = self.log.read_text(errors="replace") if self.log.exists() else ""
                raise RuntimeError(f"pg_ctl start failed:\n{done.stdout}{done.stderr}\n{log}")
        return self

    def create_database(self, name: str | None = None) -> str:
        """A new empty database; returns its URL."""
        name = name or f"t_{uuid.uuid4().hex[:12]}"
        subprocess.run(
            [str(self.bin_dir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
             "-U", SUPERUSER, "-T", "template0", name],
            check=True, capture_output=True, text=True, timeout=60,
        )
        return self.database_url(name)

    def create_schema(self) -> str:
        """A new empty schema in the session's shared ``tests`` database; returns a URL whose
        sessions use it (``options=-csearch_path=...``).

        Much cheaper than a database (a catalogue row against ~0.4 s of copying and
        checkpointing on a busy 2-core machine), and as separate for stores, which create
        their tables, and key their advisory locks, in the session's current schema.
        """
        if not self._shared_database:
            self.create_database("tests")
            self._shared_database = True
        name = f"t_{uuid.uuid4().hex[:12]}"
        subprocess.run(
            [str(self.bin_dir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
             SUPERUSER, "-d", "tests", "-v", "ON_ERROR_STOP=1", "-q", "-c",
             f"CREATE SCHEMA {name}"],
            check=True, capture_output=True, text=True, timeout=60,
        )
        return f"{self.database_url('tests')}?options=-csearch_path%3D{name}"

    def _postmaster_pid(self) -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.data / "postmaster.pid").read_text().splitlines()[0])
        return None

    def stop(self) -> None:
        """Stop the server (``pg_ctl stop -m immediate``: no checkpoint, the files are deleted next;
        SIGQUIT, then SIGKILL, to the postmaster's PID if that fails)."""
        if self._running:
            self._running = False
            pid = self._postmaster_pid()
            done = self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w",
                             "-t", str(_STOP_TIMEOUT_S), check=False)
            if done.returncode != 0 and pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGQUIT)  # immediate shutdown of the postmaster
                    time.sleep(1)
                    os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_cluster() -> Iterator[PostgresCluster]:
    """A started cluster for the ``with`` block, stopped and deleted afterwards."""
    cluster = PostgresCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def stored_bytes(location: str) -> bytes:
    """Everything a store wrote, as bytes: the SQLite file and its WAL, or every table's rows
    of a PostgreSQL database (for asserting that no secret reached storage)."""
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location) as conn:
            tables = [name for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
            dumps = [str(conn.execute(f'SELECT * FROM "{t}"').fetchall()) for t in tables]
        return "\n".join(dumps).encode()
    path = Path(location)
    wal = Path(f"{location}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
