# The two commands of the README: `make demo` and `make test`. Both set up everything first.
SHELL := /bin/bash
WITH_ENV := scripts/with_env.sh

.PHONY: setup demo test lint typecheck pytest bench clean

setup:
	@bash scripts/setup.sh

demo: setup
	@$(WITH_ENV) cosim demo

test: setup
	@$(WITH_ENV) ruff check .
	@$(WITH_ENV) ruff format --check .
	@$(WITH_ENV) mypy
	@$(WITH_ENV) python -m pytest -q $(PYTEST_ARGS)

lint: setup
	@$(WITH_ENV) ruff check .
	@$(WITH_ENV) ruff format --check .

typecheck: setup
	@$(WITH_ENV) mypy

bench: setup
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(WITH_ENV) python "$$b" || exit 1; done

clean:
	rm -rf .ros .cache build install log .pytest_cache .mypy_cache .ruff_cache meshes/anatomy
