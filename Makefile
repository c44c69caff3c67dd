# `make run` and `make test` are all a fresh machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# Blender's bpy, the judge of exported models, lives apart: it pins its own numpy.
BLENDER_VENV := .venv-blender
BLENDER_PY := $(BLENDER_VENV)/bin/python
DEMO := build/demo

.PHONY: run test fuzz fuzz-long bench lint clean venv

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

venv: $(PY)

# Builds a pack from data the project makes, lists, verifies and extracts it,
# then rebuilds it byte for byte from the extracted folder and its manifest.
run: $(PY)
	$(PY) -m pip install --quiet -e .
	$(PY) -m gamepak.demo $(DEMO)

$(BLENDER_PY):
	$(PYTHON) -m venv $(BLENDER_VENV)
	$(BLENDER_PY) -m pip install --quiet --upgrade pip
	$(BLENDER_PY) -m pip install --quiet -e '.[blender]' || echo "bpy could not be installed: the Blender tests will skip"

test: $(PY) $(BLENDER_PY)
	$(PY) -m pip install --quiet -e '.[test]'
	GAMEPAK_BLENDER_PYTHON=$(CURDIR)/$(BLENDER_PY) $(PY) -m pytest -q -n 2

# The fuzz tests (tests/test_fuzz*.py) with a larger budget than `make test` gives them:
# GAMEPAK_FUZZ_EXAMPLES mutated inputs per test (`make fuzz FUZZ_EXAMPLES=20000` for more).
FUZZ_EXAMPLES ?= 2000
fuzz: $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	GAMEPAK_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(PY) -m pytest -q -n 2 -p no:cacheprovider tests/test_fuzz*.py

# Coverage-guided fuzzing: every atheris harness in fuzz/ (one per reader, one per writer round
# trip) for its share of FUZZ_MINUTES. The corpus grows in build/fuzz-corpus/<harness> from run
# to run; crash inputs land in build/fuzz-crashes; the end is executions per minute per harness.
FUZZ_MINUTES ?= 10
fuzz-long: $(PY)
	$(PY) -m pip install --quiet -e '.[fuzz]'
	$(PY) fuzz/run.py --minutes $(FUZZ_MINUTES) --corpus build/fuzz-corpus --crashes build/fuzz-crashes

# Every benchmark, then one table of the goals they measured in this run (each script reports
# its goal rows with benchmarks/_common.py's goal_row into build/bench-rows.tsv).
bench: $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	$(PY) benchmarks/summary.py --clear
	for script in benchmarks/bench_*.py; do echo "== $$script"; $(PY) $$script || exit 1; done
	@echo "== goals measured in this run"
	@$(PY) benchmarks/summary.py

lint: $(PY)
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m ruff check src tests benchmarks fuzz
	$(PY) -m mypy src
	# The tests, benchmarks and fuzz harnesses too (each at 0 errors when added here),
	# against this tree's src rather than an installed copy (one run: the benchmarks import
	# helpers from tests, and the tests import the harnesses' seeds).
	MYPYPATH=src $(PY) -m mypy tests benchmarks fuzz

clean:
	rm -rf $(VENV) $(BLENDER_VENV) build
