import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
got = dict(rows("SELECT id, price_cents FROM products"))
done(got == {1: 1650, 2: 2750, 3: 4000, 4: 9000, 5: 6600}, f"prices: {got}")
