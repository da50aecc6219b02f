# What a learned detector can reach on the AMLSim dev sets from per-account transaction features,
# whatever the model: the bound the issue-32 targets are judged against (docs/benchmarks.md,
# "The learned detector's ceiling"). An analysis, not part of the product, so it may use
# scikit-learn; run it with:
#   python3 -m venv /tmp/ml && /tmp/ml/bin/pip install scikit-learn numpy
#   /tmp/ml/bin/python bench/analysis/learned-ceiling.py [datasets dir]
# Features: the whole history of each account (counts, sums, means and maxima in and out, distinct
# payers and payees, active days, most payments with one counterparty in a day, most payments in
# and out in a day, in/out balance and match, top counterparty's share of each flow); then the same
# plus the stage-one scores of each account's counterparties (collective classification).
# Thresholds are chosen on the training set (4-fold out-of-fold scores) unless said otherwise.
import collections, csv, sys
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score, precision_score, recall_score
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler

BASE = (sys.argv[1] if len(sys.argv) > 1 else '../shared/datasets') + '/ibm_amlsim/'
SETS = ['20K_fanin200', '20K_cycle200']
MODELS = {
    'logistic regression': lambda: LogisticRegression(max_iter=2000, class_weight='balanced'),
    'gradient-boosted trees': lambda: HistGradientBoostingClassifier(max_iter=200, random_state=0),
    'neural network (32, 16)': lambda: MLPClassifier(hidden_layer_sizes=(32, 16), max_iter=500, random_state=0),
}


def load(name):
    nodes = {r['nodeid']: r for r in csv.DictReader(open(BASE + name + '/nodes.csv'))}
    ids = sorted(nodes, key=int)
    at = {k: i for i, k in enumerate(ids)}
    n = len(ids)
    cin, cout, sin, sout, mxin, mxout = (np.zeros(n) for _ in range(6))
    payers, payees, days = ([set() for _ in ids] for _ in range(3))
    pair_day, day_in, day_out, pair_in, pair_out = (collections.Counter() for _ in range(5))
    edges = collections.defaultdict(float)
    for r in csv.DictReader(open(BASE + name + '/transactions.csv')):
        a, b, v, t = at[r['sourceNodeId']], at[r['targetNodeId']], float(r['value']), int(r['time'])
        cout[a] += 1; sout[a] += v; mxout[a] = max(mxout[a], v); payees[a].add(b); days[a].add(t)
        cin[b] += 1; sin[b] += v; mxin[b] = max(mxin[b], v); payers[b].add(a); days[b].add(t)
        pair_day[(a, b, t)] += 1; day_out[(a, t)] += 1; day_in[(b, t)] += 1
        pair_in[(b, a)] += v; pair_out[(a, b)] += v; edges[(a, b)] += v
    most_pair, most_in, most_out, top_in, top_out = (np.zeros(n) for _ in range(5))
    for (a, b, _), c in pair_day.items(): most_pair[a] = max(most_pair[a], c); most_pair[b] = max(most_pair[b], c)
    for (a, _), c in day_out.items(): most_out[a] = max(most_out[a], c)
    for (b, _), c in day_in.items(): most_in[b] = max(most_in[b], c)
    for (b, _), v in pair_in.items(): top_in[b] = max(top_in[b], v)
    for (a, _), v in pair_out.items(): top_out[a] = max(top_out[a], v)
    log = np.log1p
    count = lambda sets: np.array([len(s) for s in sets])
    x = np.column_stack([
        log(cin), log(cout), log(sin), log(sout), log(sin / np.maximum(cin, 1)), log(sout / np.maximum(cout, 1)),
        log(mxin), log(mxout), log(count(payers)), log(count(payees)), log(count(days)), log(most_pair), log(most_in),
        log(most_out), (sin - sout) / np.maximum(sin + sout, 1), np.minimum(sin, sout) / np.maximum(np.maximum(sin, sout), 1),
        top_in / np.maximum(sin, 1), top_out / np.maximum(sout, 1),
    ])
    y = np.array([int(nodes[k]['isFraud']) for k in ids])
    return x, y, edges


def neighbour_scores(score, edges, n):
    best, weighted, weight, flagged = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    for (a, b), v in edges.items():
        for x, y in ((a, b), (b, a)):
            best[x] = max(best[x], score[y]); weighted[x] += v * score[y]; weight[x] += v; flagged[x] += score[y] > 0.5
    return np.column_stack([score, best, weighted / np.maximum(weight, 1e-9), np.log1p(flagged)])


def out_of_fold(make, x, y):
    return cross_val_predict(make(), x, y, cv=StratifiedKFold(4, shuffle=True, random_state=0), method='predict_proba')[:, 1]


def judged(make, xtr, ytr, xte, yte):
    scale = StandardScaler().fit(xtr)
    oof = out_of_fold(make, scale.transform(xtr), ytr)
    threshold = max(np.linspace(0.05, 0.95, 91), key=lambda t: f1_score(ytr, oof >= t))
    scores = make().fit(scale.transform(xtr), ytr).predict_proba(scale.transform(xte))[:, 1]
    flagged = scores >= threshold
    bound = max(f1_score(yte, scores >= t) for t in np.linspace(0.01, 0.99, 99))
    return f'precision {precision_score(yte, flagged):.3f} recall {recall_score(yte, flagged):.3f} F1 {f1_score(yte, flagged):.3f} (F1 at the judged set\'s best threshold {bound:.3f})'


data = {name: load(name) for name in SETS}
for model, make in MODELS.items():
    for train, test in [(SETS[0], SETS[1]), (SETS[1], SETS[0])]:
        (xtr, ytr, etr), (xte, yte, ete) = data[train], data[test]
        print(f'cross   {model}: chosen on {train}, judged on {test}: {judged(make, xtr, ytr, xte, yte)}', flush=True)
        scale = StandardScaler().fit(xtr)
        s_tr = out_of_fold(make, scale.transform(xtr), ytr)
        s_te = make().fit(scale.transform(xtr), ytr).predict_proba(scale.transform(xte))[:, 1]
        x2tr = np.column_stack([xtr, neighbour_scores(s_tr, etr, len(ytr))])
        x2te = np.column_stack([xte, neighbour_scores(s_te, ete, len(yte))])
        print(f'cross + neighbours {model}: chosen on {train}, judged on {test}: {judged(make, x2tr, ytr, x2te, yte)}', flush=True)
    for name in SETS:
        x, y, _ = data[name]
        xtr, xte, ytr, yte = train_test_split(x, y, train_size=0.6, stratify=y, random_state=0)
        print(f'labelled 60/40 {model}, {name}: {judged(make, xtr, ytr, xte, yte)}', flush=True)
