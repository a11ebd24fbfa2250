# minitorch_nn: every target bootstraps .venv itself, so a fresh machine needs only
# Python 3.11, gcc and make.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXTRAS ?= test,io

.PHONY: venv build test fuzz-long test-fast docs notebooks bench clean lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Build requirements first, then an editable install without build isolation (faster, and the
# numpy we compile against is the one we run with).
$(STAMP): pyproject.toml setup.py | $(BIN)/python
	$(BIN)/python -m pip install -q "setuptools>=77" "Cython>=3.1,<3.4" "numpy>=2.0,<2.5" wheel
	$(BIN)/python -m pip install -q --no-build-isolation -e ".[$(EXTRAS)]"
	touch $@

venv: $(STAMP)

# Rebuild the Cython extension when _ext/ changes (a no-op otherwise).
build: $(STAMP)
	$(BIN)/python setup.py -q build_ext --inplace

test: build
	$(BIN)/python -m pytest -q -p no:cacheprovider

# The crash fuzzers' long profile (>= 100,000 op chains, 10,000 checkpoints, 3,000 safetensors
# files, each in a subprocess pool); `make test` runs a CI-sized profile (tests/test_fuzz.py).
fuzz-long: build
	$(BIN)/python -m tests.fuzzing --long

test-fast: build
	$(BIN)/python -m pytest -q -x -m "not slow"

# The site: install the `docs` extra listed in pyproject.toml (quick when already there; the
# package itself is installed by $(STAMP)), build with every tutorial executed, fail on any
# warning or tutorial error, then open the pages in headless Chromium (skipped without it).
docs: build
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['docs']))" > $(VENV)/docs-requirements.txt
	$(BIN)/python -m pip install -q -r $(VENV)/docs-requirements.txt
	rm -rf docs/auto_tutorials docs/gen_modules  # generated; a renamed tutorial must not linger
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	$(BIN)/python tools/check_pages.py docs/_build/html
	@echo "Open docs/_build/html/index.html"

# The course notebooks are the gallery's .ipynb files, written by `make docs`.
notebooks: docs
	mkdir -p notebooks
	cp docs/auto_tutorials/*.ipynb notebooks/
	@echo "Wrote $$(ls notebooks/*.ipynb | wc -l) notebooks to notebooks/"

bench: build
	$(BIN)/python -m pip install -q "torch==2.13.0"
	$(BIN)/python bench/run_all.py

lint: $(STAMP)
	$(BIN)/python -m pip install -q ruff
	$(BIN)/python -m ruff check minitorch_nn tests bench

clean:
	rm -rf build docs/_build minitorch_nn/*.so _ext/*.c
