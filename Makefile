# The two commands of the README: `make demo` and `make test`. Each sets up everything it
# needs on a fresh machine: uv (from PyPI if missing), the locked environment and bubblewrap
# (the sandbox); `make test` also Chromium and Node/npm. System packages come from Debian
# only when missing (scripts/system-deps).
SHELL := /bin/bash
# Python's bytecode cache on: a machine that turns it off (PYTHONDONTWRITEBYTECODE=1, as
# this project's CI machines do) recompiles every import in every CLI and sandbox
# subprocess the tests start, roughly doubling each start.
unexport PYTHONDONTWRITEBYTECODE
UV := $(shell command -v uv 2>/dev/null || echo "python3 -m uv")

.PHONY: demo test test-unprivileged setup lint typecheck bench bench-scale clean

setup: .venv/.synced

.venv/.synced: pyproject.toml uv.lock
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet uv
	$(UV) sync --frozen
	@touch $@

demo: setup
	@scripts/system-deps sandbox
	$(UV) run lhbench demo

# The suite in parallel (pytest-xdist), one worker more than the cores: most tests wait on
# subprocesses, servers and Chromium (a quiet 2-core run with two workers kept the cores
# busy 11 of its 26 core-minutes). worksteal hands each worker a contiguous share of the
# suite (module fixtures, a browser or a Ray cluster, start once) and moves tests to a
# worker that ran dry. PYTEST_WORKERS=0 runs it in this process.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))

test: setup
	@scripts/system-deps
	$(UV) run pytest -n $(PYTEST_WORKERS) --dist worksteal

# tests/security again as an unprivileged user (created when run as root): the sandbox
# must hold whether lhbench runs as root or not (scripts/test-unprivileged)
test-unprivileged: setup
	@scripts/system-deps
	UV="$(UV)" scripts/test-unprivileged

lint: setup
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run vulture
	$(UV) run lint-imports

typecheck: setup
	$(UV) run mypy src

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(UV) run python $$b --quick || exit 1; done

# A team's store at scale: 10,000 then 100,000 runs (1,000,000 grades) on SQLite, and on
# PostgreSQL when LHBENCH_BENCH_PG_URL names a database it may empty (docs/performance.md)
bench-scale: setup
	nice -n 5 $(UV) run python bench/scale.py

clean:
	rm -rf .venv .lhbench .pytest_cache .mypy_cache .ruff_cache
