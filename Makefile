# make setup: build .venv (torch 2.13 CPU + fairseq-fixed 0.12.3.1, wheel cached in .cache/wheels)
# make demo:  translate the demo test set with stock greedy and speculative greedy, compare, report
# make test:  the test suite (no GPU, no ../shared needed)
PY := .venv/bin/python
SETUP_STAMP := .venv/.setup-done

.PHONY: setup demo test benchmark
setup: $(SETUP_STAMP)
$(SETUP_STAMP): scripts/setup_env.sh setup.py
	bash scripts/setup_env.sh

demo: $(SETUP_STAMP)
	$(PY) scripts/demo.py

test: $(SETUP_STAMP)
	$(PY) -m pytest -q -p no:cacheprovider tests

benchmark: $(SETUP_STAMP)
	$(PY) scripts/benchmark.py
