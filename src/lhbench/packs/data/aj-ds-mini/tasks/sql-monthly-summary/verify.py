import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
got = sorted(tuple(r) for r in rows("SELECT month, total_cents FROM monthly_sales"))
done(got == [("2024-01", 5500), ("2024-02", 35000), ("2024-03", 10000)], f"monthly_sales: {got}")
