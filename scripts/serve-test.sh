#!/usr/bin/env bash
# `bmoe serve` against real clients on a tiny synthetic model: the `openai` Python client from
# PyPI (installed into a virtual environment under target/), curl and http.client. What it
# checks: scripts/tests/serve_test.py. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
BMOE=${BMOE:-target/release/bmoe}
[ -x "$BMOE" ] || cargo build --release -q -p bmoe-cli
venv=target/serve-venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import openai' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'openai>=1.40,<3'
fi
echo "serve-test: openai $("$venv/bin/python" -c 'import openai; print(openai.__version__)'), $(curl --version | head -1 | cut -d' ' -f1-2)"
dir=target/serve-test
mkdir -p "$dir"
model=$dir/tiny.gguf
[ -f "$model" ] || "$BMOE" synth --shape tiny --quant q8_0 --seed 3 --quiet -o "$model" >/dev/null
"$venv/bin/python" scripts/tests/serve_test.py "$BMOE" "$model"
