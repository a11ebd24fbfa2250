# minitorch_nn: every target bootstraps .venv itself, so a fresh machine needs only
# Python 3.11, gcc and make.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
EXTRAS ?= test,io

.PHONY: venv build test fuzz-long test-fast check docs notebooks lab bench clean lint twins-manifest cuda-check gpu-check

# Install one extra of pyproject.toml into .venv (quick when it is already there).
define install_extra
	$(BIN)/python -c "import sys, tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies'][sys.argv[1]]))" $(1) > $(VENV)/$(1)-requirements.txt
	$(BIN)/python -m pip install -q -r $(VENV)/$(1)-requirements.txt
endef

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

# After changing a function that a compiled twin mirrors, and making the twin match it again:
# record the functions' fingerprints (minitorch_nn/_twin_manifest.json, part of the source).
twins-manifest: build
	$(BIN)/python tools/twin_manifest.py

test: build
	$(BIN)/python -m pytest -q -p no:cacheprovider

# The crash fuzzers' long profile (>= 100,000 op chains, 10,000 checkpoints, 3,000 safetensors
# files, each in a subprocess pool); `make test` runs a CI-sized profile (tests/test_fuzz.py).
fuzz-long: build
	$(BIN)/python -m tests.fuzzing --long

# A student copy: the course's public tests of your tasks, with the grader's per-task table.
check: build
	$(BIN)/python -m minitorch_nn.course check

test-fast: build
	$(BIN)/python -m pytest -q -x -m "not slow"

# The site: install the `docs` extra listed in pyproject.toml (quick when already there; the
# package itself is installed by $(STAMP)), build with every tutorial executed, fail on any
# warning or tutorial error, then open every page in headless Chromium (skipped without it),
# keeping a screenshot of each tutorial page in docs/_build/screenshots/. The generated folders
# are removed first: a renamed tutorial or a page no longer built must not linger.
docs: build
	$(call install_extra,docs)
	rm -rf docs/auto_tutorials docs/gen_modules docs/_build/html
	$(BIN)/python -m sphinx -W --keep-going -b html docs docs/_build/html
	$(BIN)/python tools/check_pages.py docs/_build/html
	@echo "Open docs/_build/html/index.html"

# The course notebooks: the tutorials converted as the gallery converts them (no site build).
notebooks: build
	$(call install_extra,lab)
	$(BIN)/python tools/make_notebooks.py notebooks

# JupyterLab on the notebooks, in this .venv (its python3 kernel imports minitorch_nn); with
# ipywidgets installed, tqdm draws one live bar. LAB_ARGS=--no-browser on a remote machine;
# as root (containers) Jupyter needs --allow-root.
lab: notebooks
	$(BIN)/python -m jupyter lab --notebook-dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

bench: build
	$(BIN)/python -m pip install -q "torch==2.13.0"
	$(BIN)/python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['bench']))" > $(VENV)/bench-requirements.txt
	$(BIN)/python -m pip install -q -r $(VENV)/bench-requirements.txt
	$(BIN)/python bench/run_all.py

# Compile every cuda kernel for real GPUs (compute capabilities 8.0 and 9.0) without one: NVVM and
# NVRTC come from NVIDIA's pip wheels, cached with the signatures that compiled in .cache/cuda-check
# (numba-cuda itself is in the test extra).
cuda-check: build
	$(BIN)/python tools/cuda_check.py

# The one script for a machine with a GPU: tests/cuda on the device, then bench/gpu.py's figures,
# into bench/results/gpu-<time>.json and .md. SIM=1 runs it here on the simulator, with tiny shapes.
gpu-check: build
	$(BIN)/python tools/gpu_check.py $(if $(SIM),--sim)

lint: $(STAMP)
	$(BIN)/python -m pip install -q ruff
	$(BIN)/python -m ruff check minitorch_nn tests bench

clean:
	rm -rf build docs/_build
	find minitorch_nn -name "*.so" -delete
	find _ext -name "*.c" -delete
