"""Offline check of wave-group partition choice rules against every recorded `kiln tune validate`
CSV under docs/results/ (no GPU): for each shape, the measured time of the partition a rule picks
from the predictions the tuner has at run time (predicted_saved_us), as a fraction of the fastest
measured partition, and how many shapes reach 99%. Rules: the tuner's own choice (the `predictive`
column), the saved profile's minimum, ties within 1/2/3% broken towards more or fewer groups, the
fresh profile's minimum (not available at run time: the model's ceiling) and one group per wave.
Usage: python3 scripts/tuner_choice_rules.py   (from the repository root)
"""
import csv,glob,collections,statistics,sys
files=sorted(glob.glob('docs/results/*/*/validate-*.csv')+glob.glob('docs/results/*/*/*/validate-*.csv'))
def groups(plan):
    g=plan.split('groups=')[1].split()[0]; return len(g.split(','))
def rule_pick(rows, key, tol, prefer):
    best=min(float(r[key]) for r in rows)
    cand=[r for r in rows if float(r[key])<=best*(1+tol)]
    if prefer=='most': return max(cand,key=lambda r:(groups(r['plan']),-float(r[key])))
    if prefer=='fewest': return min(cand,key=lambda r:(groups(r['plan']),float(r[key])))
    return min(cand,key=lambda r:float(r[key]))
allres=collections.defaultdict(list)
for f in files:
    rows=list(csv.DictReader(open(f)))
    if not rows or 'predicted_saved_us' not in rows[0]: continue
    by=collections.defaultdict(list)
    for r in rows: by[r['shape']].append(r)
    res=collections.defaultdict(list)
    for s,rs in by.items():
        best=min(float(r['measured_us']) for r in rs)
        pred=[r for r in rs if r['predictive']=='1']
        if pred: res['tuner'].append(best/float(pred[0]['measured_us']))
        for name,key,tol,pref in [('saved',  'predicted_saved_us',0,'min'),
                                  ('saved+1%most','predicted_saved_us',0.01,'most'),
                                  ('saved+2%most','predicted_saved_us',0.02,'most'),
                                  ('saved+3%most','predicted_saved_us',0.03,'most'),
                                  ('saved+2%fewest','predicted_saved_us',0.02,'fewest'),
                                  ('fresh','predicted_us',0,'min'),
                                  ('perwave',None,None,None)]:
            if name=='perwave':
                w=max(rs,key=lambda r:groups(r['plan'])); res[name].append(best/float(w['measured_us'])); continue
            p=rule_pick(rs,key,tol,pref); res[name].append(best/float(p['measured_us']))
    line=f.split('results/')[1][:60]
    print(f"{line:60s}", ' '.join(f"{k}:{statistics.mean(v):.4f}/{sum(x>=0.99 for x in v)}of{len(v)}" for k,v in res.items()))
    for k,v in res.items(): allres[k]+=v
print('ALL', ' '.join(f"{k}:{statistics.mean(v):.4f}/{sum(x>=0.99 for x in v)}of{len(v)}" for k,v in allres.items()))
