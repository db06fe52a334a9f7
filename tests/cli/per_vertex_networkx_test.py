#!/usr/bin/env python3
"""per_vertex_networkx_test.py — `tristream count --per-vertex` read back with the csv module and
compared with networkx: triangles() and clustering() per vertex, average_clustering(),
transitivity() and the number of nodes, on karate, seeded random graphs (with duplicates and
self-loops), a Matrix Market file declaring isolated vertices (--count-isolated) and a CSV file
of vertex names with commas and quotes (--names), written and read back with the csv module.

usage: per_vertex_networkx_test.py TRISTREAM_BINARY TESTS_DATA_DIR
Exits 77 (CTest: skipped) with a message when networkx is not installed.
"""
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import networkx as nx
except ImportError:
    print("SKIPPED: networkx is not installed (apt-get install python3-networkx, or "
          "python3 -m pip install networkx)")
    sys.exit(77)

BINARY, DATA = sys.argv[1], sys.argv[2]
OUT_DIR = None  # a temporary directory: every file the test writes goes there
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def count(path, *extra):
    """Runs count --json with a per-vertex CSV; returns (the JSON object, the CSV rows)."""
    out = os.path.join(OUT_DIR, os.path.basename(path) + ".pv.csv")
    run = subprocess.run([BINARY, "count", path, "--backend", "cpu", "--json", "--per-vertex", out,
                          *extra], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("tristream failed on %s: %s" % (path, run.stderr))
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return json.loads(run.stdout), rows


def compare(name, graph, path, *extra):
    summary, rows = count(path, *extra)
    check(list(rows[0].keys()) == ["vertex", "degree", "triangles", "clustering"] if rows else
          graph.number_of_nodes() == 0, name + ": header vertex,degree,triangles,clustering")
    ids = [int(r["vertex"]) for r in rows]
    check(ids == sorted(graph.nodes()), name + ": one row per node, ordered by id")
    tri, cc = nx.triangles(graph), nx.clustering(graph)
    for r in rows:
        v = int(r["vertex"])
        if v not in graph:
            continue
        check(int(r["degree"]) == graph.degree(v), "%s: degree of %d" % (name, v))
        check(int(r["triangles"]) == tri[v], "%s: triangles of %d" % (name, v))
        check(abs(float(r["clustering"]) - cc[v]) <= 1e-15,
              "%s: clustering of %d: %s vs %r" % (name, v, r["clustering"], cc[v]))
    check(summary["vertices"] == graph.number_of_nodes(),
          "%s: vertices %d vs %d nodes" % (name, summary["vertices"], graph.number_of_nodes()))
    check(summary["triangles"] == sum(tri.values()) // 3, name + ": triangles")
    check(abs(summary["transitivity"] - nx.transitivity(graph)) <= 1e-15,
          "%s: transitivity %r vs %r" % (name, summary["transitivity"], nx.transitivity(graph)))
    avg = nx.average_clustering(graph)
    check(abs(summary["average_clustering"] - avg) <= 1e-14,
          "%s: average clustering %r vs %r" % (name, summary["average_clustering"], avg))
    print("ok: %s (%d nodes, %d triangles)" % (name, graph.number_of_nodes(), summary["triangles"]))


def compare_named(name, edges, path):
    """--names: the rows hold the names, in order of first appearance in a non-loop edge."""
    summary, rows = count(path, "--names")
    graph = simple_graph(edges)
    first = []
    for u, v in edges:
        if u != v:
            first += [x for x in (u, v) if x not in first]
    check([r["vertex"] for r in rows] == first, name + ": rows by first appearance")
    tri, cc = nx.triangles(graph), nx.clustering(graph)
    for r in rows:
        v = r["vertex"]
        check(int(r["degree"]) == graph.degree(v), "%s: degree of %r" % (name, v))
        check(int(r["triangles"]) == tri[v], "%s: triangles of %r" % (name, v))
        check(abs(float(r["clustering"]) - cc[v]) <= 1e-15, "%s: clustering of %r" % (name, v))
    check(summary["triangles"] == sum(tri.values()) // 3, name + ": triangles")
    print("ok: %s (%d nodes, %d triangles)" % (name, graph.number_of_nodes(), summary["triangles"]))


def simple_graph(edges, nodes=()):
    g = nx.Graph()
    g.add_nodes_from(nodes)
    g.add_edges_from((u, v) for u, v in edges if u != v)
    return g


def main():
    global OUT_DIR
    karate = os.path.join(DATA, "karate.el")
    with tempfile.TemporaryDirectory() as tmp:
        OUT_DIR = tmp
        compare("karate", nx.read_edgelist(karate, nodetype=int, comments="#"), karate)
        for seed, (n, m) in enumerate([(60, 400), (200, 1500), (500, 1200), (40, 700)]):
            rnd = random.Random(seed)
            # ids spread out (gaps), duplicates, reversed duplicates and self-loops included
            edges = [(rnd.randrange(n) * 3 + 5, rnd.randrange(n) * 3 + 5) for _ in range(m)]
            edges += edges[: m // 10] + [(v, u) for u, v in edges[: m // 10]] + [(7, 7)]
            path = os.path.join(tmp, "g%d.el" % seed)
            with open(path, "w") as f:
                f.writelines("%d %d\n" % e for e in edges)
            compare("seeded %d" % seed, simple_graph(edges), path)
        # Matrix Market declaring 44 vertices of which karate's 34 have edges.
        kedges = [tuple(map(int, line.split())) for line in open(karate)
                  if line.strip() and not line.startswith("#")]
        mtx = os.path.join(tmp, "k.mtx")
        with open(mtx, "w") as f:
            f.write("%%%%MatrixMarket matrix coordinate pattern symmetric\n44 44 %d\n" % len(kedges))
            f.writelines("%d %d\n" % e for e in kedges)
        compare("karate.mtx --count-isolated", simple_graph(kedges, range(1, 45)), mtx,
                "--count-isolated")
        # Names with the CSV delimiter, quotes and blanks inside, written by the csv module.
        rnd = random.Random(22)
        words = ["ann", "Smith, Bob", 'say "hi"', "New York", "x,y,z", "12", "a;b"]
        words += ["w%d" % k for k in range(40)]
        edges = [(rnd.choice(words), rnd.choice(words)) for _ in range(400)]
        named = os.path.join(tmp, "named.csv")
        with open(named, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(edges)
        compare_named("named csv", edges, named)
    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)


main()
