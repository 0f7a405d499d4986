# One-command set-up. `make demo` installs and runs the main job; `make test` installs
# and runs the test suite (this is what .ci/run calls).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test install lint figures bench clean

$(PY):
	# --system-site-packages: a torch already installed on the machine (e.g. a CUDA build)
	# is reused instead of being replaced.
	$(PYTHON) -m venv --system-site-packages $(VENV)

$(STAMP): $(PY) pyproject.toml
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pruneleak demo

lint: $(STAMP)
	$(VENV)/bin/ruff check .

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest

figures: $(STAMP)
	$(VENV)/bin/pruneleak figures

clean:
	rm -rf $(VENV) build *.egg-info
