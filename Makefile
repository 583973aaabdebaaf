# toolcycle — the two set-up commands are `make demo` and `make test`.
# Python 3.12+ is required (the gram parser ships for 3.12+). We look for it on PATH, then
# under pyenv, and stop with a clear message when there is none.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

PYTHON312 := $(shell for c in python3.13 python3.12; do command -v $$c >/dev/null 2>&1 && { $$c -c 'import sys; sys.exit(sys.version_info < (3, 12))' && command -v $$c; break; }; done)
ifeq ($(PYTHON312),)
PYTHON312 := $(shell command -v pyenv >/dev/null 2>&1 && for v in 3.13 3.12; do p=$$(pyenv prefix $$v 2>/dev/null) && [ -x $$p/bin/python ] && { echo $$p/bin/python; break; }; done)
endif

.PHONY: help venv dev test lint typecheck pytest browser demo bench clean

help:
	@echo "make demo   - set up .venv with the local model and run the demo agent"
	@echo "make test   - set up .venv and run ruff, mypy --strict and the whole test suite"
	@echo "make bench  - run the benchmarks under bench/"

$(VENV)/.created:
	@if [ -z "$(PYTHON312)" ]; then \
	  echo "error: toolcycle needs Python 3.12 or newer; none found on PATH or under pyenv." >&2; \
	  echo "       install one (e.g. 'pyenv install 3.12') and run make again." >&2; exit 1; fi
	$(PYTHON312) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	touch $@

$(VENV)/.dev: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e '.[dev]'
	touch $@

# BFCL data and executable backends for tests/conformance, pinned and installed without their
# declared dependencies (heavy and unneeded), which a pip extra cannot express.
CONFORMANCE_PKGS := bfcl-eval==2026.3.23 mpmath==1.3.0

$(VENV)/.conformance: $(VENV)/.dev
	$(PIP) install --quiet --no-deps $(CONFORMANCE_PKGS)
	touch $@

venv: $(VENV)/.created
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

pytest: dev browser
	$(VENV)/bin/pytest

test: lint typecheck pytest

bench: dev
	$(PY) bench/overhead.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
