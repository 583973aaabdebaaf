"""Two arms of one or more bfcl_local logs, paired by entry: right in each, only in one, the
exact sign test. `paired.py ARM_A ARM_B LOG [LOG ...]`"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4]))
from toolcycle.evals.stats import sign_test, wilson

arm_a, arm_b, *logs = sys.argv[1:]
rows: dict[tuple[str, str], dict[str, object]] = {}
for log in logs:
    with open(log, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            rows[(str(row["arm"]), str(row["id"]))] = row
ids = sorted({i for a, i in rows if a == arm_a} & {i for a, i in rows if a == arm_b})
a = [bool(rows[(arm_a, i)]["right"]) for i in ids]
b = [bool(rows[(arm_b, i)]["right"]) for i in ids]
only_a = sum(x and not y for x, y in zip(a, b, strict=True))
only_b = sum(y and not x for x, y in zip(a, b, strict=True))
for arm, right in ((arm_a, a), (arm_b, b)):
    share = wilson(sum(right), len(ids))
    print(f"{arm}: {sum(right)}/{len(ids)} = {100 * share.mean:.0f} % "
          f"[{100 * share.low:.0f}, {100 * share.high:.0f}]")
print(f"only {arm_a}: {only_a}; only {arm_b}: {only_b}; "
      f"sign test p = {sign_test(only_a, only_b):.3g}")
