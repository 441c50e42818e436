import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
got = rows("SELECT rank, customer_id, total_cents FROM top_customers ORDER BY rank")
done([tuple(r) for r in got] == [(1, 3, 20000), (2, 2, 12500), (3, 1, 8000)], f"top_customers: {got}")
