"""GPU time by op and by (op, shapes) of WT_TRACE files, side by side."""
import collections, json, sys

def load(path):
    try:
        ev = json.load(open(path))
    except Exception as e:
        print(path, "unreadable:", e)
        return None, None
    by_op, by_shape = collections.Counter(), collections.defaultdict(lambda: [0.0, 0])
    for e in ev:
        if e.get("ph") != "X":
            continue
        by_op[e["name"]] += e["dur"]
        k = (e["name"], e.get("args", {}).get("shapes", ""))
        by_shape[k][0] += e["dur"]
        by_shape[k][1] += 1
    return by_op, by_shape

runs = [(p, *load(p)) for p in sys.argv[1:]]
for p, by_op, by_shape in runs:
    if by_op is None:
        continue
    total = sum(by_op.values())
    print(f"\n{p}: {total / 1e3:.1f} ms of GPU time")
    for name, d in by_op.most_common(12):
        print(f"  {name:24s} {d / 1e3:9.2f} ms {100 * d / total:5.1f} %")
    print("  largest (op, shapes): total ms, count, us each")
    for (name, shp), (d, n) in sorted(by_shape.items(), key=lambda kv: -kv[1][0])[:14]:
        print(f"  {name:10s} {shp[:70]:70s} {d / 1e3:8.2f} {n:5d} {d / n:8.1f}")
