"""The Python Fashion-MNIST example against the C program: the same
weights, batches and updates, so the same losses (printed to 4 digits) on
the CPU backend. Run by ctest as
    example_matches_c.py <train_fashion_mnist binary> <example .py>"""
import re
import subprocess
import sys

ARGS = ["--backend", "cpu", "--steps", "8", "--batch", "16", "--eval-limit", "0", "--max-loss", "10"]


def losses(cmd):
    r = subprocess.run(cmd + ARGS, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed (%d):\n%s%s" % (cmd, r.returncode, r.stdout, r.stderr))
    found = re.findall(r"(epoch \d+: loss [0-9.]+|mean loss of the last \d+ steps: [0-9.]+)", r.stdout)
    if len(found) != 2:
        sys.exit("unexpected output of %s:\n%s" % (cmd, r.stdout))
    return found


c = losses([sys.argv[1]])
py = losses([sys.executable, sys.argv[2]])
print("C:      %s\nPython: %s" % (c, py))
if c != py:
    sys.exit("the Python example's losses differ from the C program's")
