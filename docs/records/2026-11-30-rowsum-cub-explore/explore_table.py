# explore_table.py RUN.json|FOLDER [VARIANTS]: a scratch run's medians per (dtype, shape, timer).
import json, glob, sys
f = sys.argv[1] if sys.argv[1].endswith(".json") else glob.glob(sys.argv[1] + "/**/*.json", recursive=True)[0]
d = json.load(open(f))
cases = {}
for r in d["records"]:
    if r["op"] == "copy": continue
    cases.setdefault((r["dtype"], "x".join(map(str, r["shape"])), r["timer"]), {})[r["variant"]] = r["median_us"]
vs = sys.argv[2].split(",") if len(sys.argv) > 2 else ["auto", "block", "block_occ4", "block_occ5", "block_occ6", "looped", "looped_occ8", "looped_occ12", "cub"]
print("dtype shape timer | " + " ".join(f"{v[:10]:>10}" for v in vs))
for k in sorted(cases):
    c = cases[k]
    print(f"{k[0][:4]} {k[1]:>10} {k[2][:5]} | " + " ".join(f"{c.get(v, float('nan')):10.2f}" for v in vs))
for k in ["timer_floor_start", "timer_floor_before", "timer_floor"]:
    for x in d["extra"].get(k, []): print(k, x["timer"], round(x["median_us"], 3))
m = d["meta"]; print("started", m.get("started"), "visits_started", m.get("visits_started"), "finished", m.get("finished"))
