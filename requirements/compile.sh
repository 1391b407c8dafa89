#!/usr/bin/env bash
# Compiles the locks (requirements/*.txt) from the top-level pins (requirements/*.in) with
# pip-tools' pip-compile, in layers: course, then book, grader, hub (the grader's, plus JupyterHub)
# and test, each constrained by the locks before it, so that a package has one version in every lock.
#   requirements/compile.sh                    after editing a pin in a .in file
#   requirements/compile.sh -P transformers    upgrade one package (pip-compile --upgrade-package)
# pip-compile keeps every version already in a lock unless a .in file or -P asks for another.
# It needs pip-tools (in the developer's lock: make install) and Python 3.11, like the course.
set -euo pipefail
cd "$(dirname "$0")/.."
compile=$(command -v .venv/bin/pip-compile || command -v pip-compile) \
    || { echo "compile.sh: pip-compile not found: make install, or pip install pip-tools" >&2; exit 2; }
for name in course book grader hub test; do
    lock=requirements/$name.txt
    CUSTOM_COMPILE_COMMAND=requirements/compile.sh "$compile" --quiet --allow-unsafe --strip-extras \
        --no-emit-index-url --no-emit-find-links "$@" --output-file "$lock" "requirements/$name.in"
    # The locks are resolved against PyTorch's CPU build (torch==2.13.0+cpu, which this kind of
    # machine has on disk, or PyTorch's CPU index: PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu),
    # whose metadata names no CUDA libraries. The lock says torch==2.13.0, which that build
    # satisfies and which every platform can install (course.in says which build pip then takes).
    sed -i -E 's/^torch==([^+ ]+)\+cpu$/torch==\1/' "$lock"
    if grep -qE '^(nvidia-|triton==)' "$lock"; then
        echo "compile.sh: $lock was resolved against torch's CUDA build (it names nvidia-* or triton);" \
             "make pip-compile see the CPU build (PIP_EXTRA_INDEX_URL above)" >&2
        exit 1
    fi
done
