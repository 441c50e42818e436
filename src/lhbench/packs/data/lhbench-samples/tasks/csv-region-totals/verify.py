"""Label: every region's total (to the cent) is in report.md, in alphabetical order."""
import argparse, csv, json, re, sys
from collections import defaultdict
from pathlib import Path

ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True)
root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
totals = defaultdict(float)
with (root / "data" / "sales.csv").open() as f:
    for row in csv.DictReader(f):
        totals[row["region"]] += float(row["amount"])
report = root / "report.md"
if not report.is_file():
    done(False, "report.md is missing")
found = {}
for line in report.read_text(errors="replace").splitlines():
    m = re.match(r"\s*[-*]?\s*(\w+)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*$", line)
    if m:
        found[m.group(1).lower()] = float(m.group(2))
wrong = [r for r, t in totals.items() if abs(found.get(r, -1) - round(t, 2)) > 0.005]
order = [r for r in found if r in totals]
if wrong:
    done(False, f"wrong or missing totals for {', '.join(sorted(wrong))}")
done(order == sorted(totals), "all totals right" + ("" if order == sorted(totals) else ", but not in alphabetical order"))
