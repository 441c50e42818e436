import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
got = sorted(r[0] for r in rows("SELECT id FROM users"))
done(got == [2, 3, 4], f"remaining users: {got}")
