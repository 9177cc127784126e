#!/usr/bin/env bash
# The README's route from a clone to a working package, offline: a virtual
# environment that sees the system's NumPy, `pip install --no-build-isolation
# ./python` into it (the library of the build bundled), then the README's
# Python example, run from outside the source tree.
#   install_check.sh <python> <scratch dir> <library> <repository>
set -euo pipefail
py=$1 dir=$2 lib=$3 repo=$4
rm -rf "$dir"
mkdir -p "$dir"
"$py" -m venv --system-site-packages "$dir/venv"
WEBTENSOR_LIBRARY="$lib" "$dir/venv/bin/pip" install -q --no-build-isolation --no-index \
    --disable-pip-version-check "$repo/python"
# The example is the README's first python block after the "## Python" heading.
awk '/^## Python/ {s=1} s && /^```python$/ {p=1; next} p && /^```$/ {exit} p' \
    "$repo/README.md" > "$dir/readme_example.py"
[ -s "$dir/readme_example.py" ] || { echo "no Python example in README.md"; exit 1; }
cd "$dir"
env -u WEBTENSOR_LIBRARY -u PYTHONPATH "$dir/venv/bin/python" - <<'PY'
import webtensor, os, sys
# The installed package, with its bundled library, not the source tree's.
assert os.path.dirname(webtensor.library_path) == os.path.dirname(webtensor.__file__), webtensor.library_path
print("installed:", webtensor.__file__)
PY
env -u WEBTENSOR_LIBRARY -u PYTHONPATH "$dir/venv/bin/python" readme_example.py
echo "install_check: passed"
