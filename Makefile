# The README's commands. Each installs what it needs on a fresh machine first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.cxrkg-installed

.PHONY: install server demo lint test test-unit bench clean

# The Python install and the server build run side by side (two jobs): the first is network and unpacking,
# the second Maven; together about as long as the longer of the two on a fresh machine.
install:
	@$(MAKE) --no-print-directory -j2 $(STAMP) server

# uv installs the same pinned set as pip would (constraints.txt), several times faster: on a fresh machine pip
# took about 177 s for the 6 GB of .venv. uv itself is pinned in constraints.txt and bootstrapped with pip.
UV := $(VENV)/bin/uv
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt uv
	# setuptools warns that an editable install can be shadowed by same-named folders (none here)
	PYTHONWARNINGS=ignore $(UV) pip install --quiet --compile-bytecode --python $(PY) -c constraints.txt -e ".[gnn,test,extract,questions]"
	# medspaCy 1.3.1 declares spacy<3.8, whose wheels need numpy<2 (pandas 3 needs numpy>=2); it runs
	# on spacy 3.8, so it is installed without its own pins (see README, "Dependencies").
	$(UV) pip install --quiet --compile-bytecode --python $(PY) --no-deps -c constraints.txt medspacy PyRuSH medspacy_quickumls
	# radgraph's reward functions (F1RadGraph in `cxrkg score-reports`) are one file that imports nothing; the
	# package's model needs torch and transformers, which the extra cxrkg[radgraph] adds (graph/report_scoring/radgraph_reward.py).
	# lunguage-score: LUNGUAGESCORE's reader, run on `cxrkg export lunguage` by tests/e2e/test_lunguagescore_reads_export.py;
	# its scorer's encoders come from a model hub at run time, so its dependencies (transformers, openai...) are left out
	$(UV) pip install --quiet --compile-bytecode --python $(PY) --no-deps -c constraints.txt radgraph lunguage-score
	touch $(STAMP)

# Neo4j Community jars from Maven Central plus cxrkg's launcher (graph/neo4j_server/pom.xml).
SERVER := graph/neo4j_server
server: $(SERVER)/target/cxrkg-neo4j-server.jar

$(SERVER)/target/cxrkg-neo4j-server.jar: $(SERVER)/pom.xml $(shell find $(SERVER)/src -type f)
	mvn --batch-mode --quiet -f $(SERVER)/pom.xml package

demo: install
	$(VENV)/bin/cxrkg demo

# The quality gate (configured in pyproject.toml): ruff, then mypy, over graph/, gnn/ and flows/; ruff's
# pyflakes (F) and bugbear (B) rules over tests/ and benchmarks/ too
lint: $(STAMP)
	$(PY) -m ruff check graph gnn flows
	$(PY) -m ruff check --select F,B tests benchmarks
	$(PY) -m mypy

# Every marked group must run here: a skipped java, network or extract test fails the run (tests/fixtures/needs.py,
# docs/testing.md). `make test CXRKG_REQUIRE=` relaxes it on a machine that lacks one of them.
CXRKG_REQUIRE ?= java,network,extract
test: install lint
	CXRKG_REQUIRE=$(CXRKG_REQUIRE) $(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; fi; exit $$rc

# tests/unit only: no Java, no Neo4j, no server build
test-unit: $(STAMP)
	$(PY) -m pytest tests/unit; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests" >&2; fi; exit $$rc

bench: install
	$(PY) benchmarks/ingest_benchmark.py

clean:
	rm -rf $(VENV) $(SERVER)/target .cxrkg
