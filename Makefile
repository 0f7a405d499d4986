# One-command set-up. `make demo` installs and runs the main job (files under
# pruneleak-out/demo/); `make test` installs and runs the test suite (this is what .ci/run
# calls); `make figures` refreshes the committed paper_figs/, and is the only target
# that writes into tracked files.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
FIGURES := paper_figs

.PHONY: demo test test-fast install lint docs figures bench clean

$(PY):
	# --system-site-packages: a torch already installed on the machine (e.g. a CUDA build)
	# is reused instead of being replaced.
	$(PYTHON) -m venv --system-site-packages $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[test,ray,flower,docs]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pruneleak demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# Two stages: the fast lane (unit, property, invalid-input and doctests; `make test-fast`
# alone while developing), then the end-to-end checks (notebooks, Ray, the installed
# package, a Flower simulation: marker e2e). pytest's exit status 5 (no test collected)
# fails either stage. Each stage runs on one worker per core (pytest-xdist, one torch
# thread each: tests/conftest.py); the Ray and Flower tests share one worker
# (--dist loadgroup), so that one Ray runtime runs at a time.
XDIST := -n auto --dist loadgroup

test: lint test-fast
	$(PY) -m pytest -m e2e $(XDIST)

test-fast: $(STAMP)
	$(PY) -m pytest -m "not e2e" $(XDIST)

# The documentation site into build/docs/site (open its index.html), every warning an
# error (--strict: a broken link or cross-reference, a docstring parameter that is not in
# the signature). The e2e stage of `make test` runs the same build (tests/test_docs_build.py).
docs: $(STAMP)
	$(PY) -m mkdocs build --strict --site-dir build/docs/site

# The demo figures, the quick demo on the faces (paper_figs/faces/, about a minute of CPU
# time), the verification report and every notebook's figures, into the committed
# folder (the demos' demo.jsonl and reconstructions/ there are ignored by git and let a
# rerun resume).
figures: $(STAMP)
	$(VENV)/bin/pruneleak demo --out $(FIGURES)
	$(VENV)/bin/pruneleak demo --dataset faces --quick --out $(FIGURES)/faces
	$(VENV)/bin/pruneleak verify --out $(FIGURES)
	$(VENV)/bin/pruneleak figures --notebooks notebooks --out $(FIGURES)

# Every benchmarks/bench_*.py at its --quick size, one after the other, each ending with
# its `headline:` lines (the full sizes: run a script without --quick).
bench: $(STAMP)
	for script in benchmarks/bench_*.py; do $(PY) $$script --quick || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info
