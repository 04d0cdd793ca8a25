# The two commands of the README: `make demo` and `make test`. Both set up everything first.
SHELL := /bin/bash
WITH_ENV := scripts/with_env.sh
# `make test` runs pytest on this many processes (pytest-xdist); each test directory is one unit of work
# (test/conftest.py), so its shared fixtures are built once. PYTEST_WORKERS=0 runs in this process.
# Four on the 2-core machine: the live tests spend much of their time waiting for their node processes and for
# DDS discovery (measured: the tests in 10 min 14 s with 4, 2.6 % idle; 11 min 0 s with 3, 12 % idle).
PYTEST_WORKERS ?= 4
# pytest as `make test` runs it, on the suite's selection (test/test_docs_build.py runs under `make docs`), allowed to
# keep its rewritten test modules (see test-steps)
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(WITH_ENV) python -m pytest -m "not docs_build"

.PHONY: setup demo test test-steps lint typecheck pytest bench docs clean

setup:
	@bash scripts/setup.sh

demo: setup
	@$(WITH_ENV) cosim demo

# `make test` prints its own time (set-up included) at the end, passed or failed.
test:
	@start=$$(date +%s); status=0; \
	$(MAKE) --no-print-directory test-steps || status=$$?; \
	took=$$(( $$(date +%s) - start )); \
	echo "make test: $$(( took / 60 )) min $$(( took % 60 )) s (set-up, lint, types, tests)"; \
	exit $$status

# pytest rewrites the assertions of every test module it imports, in each of its processes: 3.7 of the 10.4 CPU-s
# that one process spends collecting the suite. Its rewritten modules are cached in test/**/__pycache__ unless
# PYTHONDONTWRITEBYTECODE is set (as on some CI machines), and in a fresh clone the four processes would all rewrite
# at once; so one collection writes the cache while lint and types run (mypy keeps one core busy for about 20 s),
# and the tests read it.
test-steps: setup
	@$(PYTEST) --collect-only -q -p no:cacheprovider >/dev/null 2>&1 & cache=$$!; status=0; \
	{ $(WITH_ENV) ruff check . && $(WITH_ENV) ruff format --check . && $(WITH_ENV) mypy; } || status=$$?; \
	wait $$cache; exit $$status
	@$(PYTEST) -q -n $(PYTEST_WORKERS) --dist loadgroup --durations=15 $(PYTEST_ARGS)

lint: setup
	@$(WITH_ENV) ruff check .
	@$(WITH_ENV) ruff format --check .

typecheck: setup
	@$(WITH_ENV) mypy

# The documentation as HTML in build/docs (Sphinx, MyST Markdown, the API from the docstrings; docs/conf.py),
# warnings as errors, then the tests of the built site (test/test_docs_build.py, marked docs_build: every guide
# a page, every package in the API reference, the links that leave docs/). Open build/docs/index.html.
# `make test` leaves the full build to this target (about 2 min of CPU); CI (.ci/run) runs both.
docs: setup
	@$(WITH_ENV) python -m sphinx -b html -W --keep-going -j auto -q docs build/docs
	@COSIM_BUILT_DOCS=build/docs $(WITH_ENV) python -m pytest -q -p no:cacheprovider -m docs_build test/test_docs_build.py
	@echo "make docs: build/docs/index.html"

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(WITH_ENV) python "$$b" || exit 1; done

clean:
	rm -rf .ros .cache build install log .pytest_cache .mypy_cache .ruff_cache meshes/anatomy
