"""The Python module against networkx on small seeded graphs: paths, NumPy edge arrays and
networkx graphs as input, options as keyword arguments, per-vertex figures aligned with the
original ids (or the nodes), conversion, and the errors of bad input and bad options."""

import threading

import networkx as nx
import numpy as np
import pytest

import tristream

CPU = {"backend": "cpu", "threads": 2}


def nx_reference(g):
    t = nx.triangles(g)
    return sum(t.values()) // 3, t


def random_graph(n, m, seed):
    return nx.gnm_random_graph(n, m, seed=seed)


def test_networkx_graph_matches_networkx():
    g = random_graph(200, 1500, 7)
    g.add_node("isolated")
    total, per = nx_reference(g)
    r = tristream.count(g, clustering=True, **CPU)
    assert r.triangles == total
    assert r.per_vertex == per  # a dict over every node, the isolated one included
    cc = nx.clustering(g)
    assert r.clustering.keys() == cc.keys()
    for node, value in cc.items():
        assert r.clustering[node] == pytest.approx(value, abs=1e-12)
    assert r.transitivity == pytest.approx(nx.transitivity(g), abs=1e-12)
    assert r.average_clustering == pytest.approx(nx.average_clustering(g), abs=1e-12)
    assert r.edges == g.number_of_edges()


def test_networkx_labels_that_are_not_integers():
    g = nx.karate_club_graph()
    g = nx.relabel_nodes(g, {v: f"member-{v}" for v in g})
    total, per = nx_reference(g)
    r = tristream.count(g, per_vertex=True, **CPU)
    assert r.triangles == total == 45
    assert r.per_vertex == per


def test_numpy_array_per_vertex_indexed_by_original_id():
    g = random_graph(300, 2500, 3)
    edges = np.array([(3 * u + 5, 3 * v + 5) for u, v in g.edges()], dtype=np.int64)
    total, per = nx_reference(g)
    r = tristream.count(edges, per_vertex=True, **CPU)
    assert r.triangles == total
    expected = np.zeros(3 * 299 + 6, dtype=np.uint64)
    for v, t in per.items():
        expected[3 * v + 5] = t
    assert len(r.per_vertex) == int(r.vertex_ids[-1]) + 1
    np.testing.assert_array_equal(r.per_vertex, expected[: len(r.per_vertex)])
    assert r.clustering is None  # not requested


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64, np.int32, np.int64])
def test_numpy_dtypes(dtype):
    g = random_graph(100, 600, 11)
    edges = np.array(list(g.edges()), dtype=dtype)
    assert tristream.count(edges, **CPU).triangles == nx_reference(g)[0]


def test_non_contiguous_array():
    g = random_graph(80, 400, 2)
    wide = np.array([(u, 0, v) for u, v in g.edges()], dtype=np.int64)
    assert tristream.count(wide[:, ::2], **CPU).triangles == nx_reference(g)[0]


def test_path_input_and_convert(tmp_path):
    g = random_graph(150, 900, 5)
    el = tmp_path / "g.el"
    el.write_text("".join(f"{u} {v}\n" for u, v in g.edges()))
    total = nx_reference(g)[0]
    assert tristream.count(el, **CPU).triangles == total
    summary = tristream.convert(str(el), tmp_path / "g.tcsr", memory_limit=64 << 20)
    assert summary["edges"] == g.number_of_edges()
    assert summary["memory_limit_bytes"] == 64 << 20
    assert summary["host_peak_bytes"] > 0
    r = tristream.count(tmp_path / "g.tcsr", **CPU)
    assert r.triangles == total
    assert r.convert_seconds == 0.0
    tristream.convert(np.array(list(g.edges())), tmp_path / "a.tcsr", zstd_level=1)
    assert tristream.count(str(tmp_path / "a.tcsr"), **CPU).triangles == total


def test_options_as_keywords():
    g = random_graph(400, 4000, 13)
    edges = np.array(list(g.edges()))
    total, per = nx_reference(g)
    for scheme in ("range", "hash", "vertex"):
        r = tristream.count(edges, scheme=scheme, parts=3, gpu_memory="4G", host_memory=1 << 30,
                            per_vertex=True, **CPU)
        assert r.triangles == total
        assert r.plan["scheme"] == scheme
        assert r.plan["parts"] >= 1
        assert r.stats["backend"] == "cpu"
        assert int(r.per_vertex.sum()) == 3 * total
        assert r.host_budget_bytes == 1 << 30
        assert 0 < r.host_peak_bytes <= r.host_budget_bytes


def test_self_loops_and_duplicates_are_cleaned():
    edges = np.array([[1, 2], [2, 1], [2, 3], [3, 1], [3, 3], [1, 2]])
    r = tristream.count(edges, **CPU)
    assert (r.triangles, r.edges, r.vertices) == (1, 3, 3)


def test_empty_graph():
    r = tristream.count(np.zeros((0, 2), dtype=np.int64), per_vertex=True, **CPU)
    assert r.triangles == 0
    assert len(r.per_vertex) == 0
    assert tristream.count(nx.empty_graph(4), per_vertex=True, **CPU).per_vertex == {
        0: 0, 1: 0, 2: 0, 3: 0}


def test_bad_options():
    edges = np.array([[0, 1], [1, 2], [2, 0]])
    with pytest.raises(tristream.UsageError, match="backend"):
        tristream.count(edges, backend="abacus")
    with pytest.raises(tristream.UsageError, match="gpu_memory"):
        tristream.count(edges, gpu_memory="lots")
    with pytest.raises(TypeError, match="unknown option"):
        tristream.count(edges, colour="red")
    with pytest.raises(ValueError):  # UsageError is a ValueError too
        tristream.count(edges, parts=5000, **CPU)


def test_bad_input(tmp_path):
    with pytest.raises(tristream.InputError, match="absent.el"):
        tristream.count(tmp_path / "absent.el", **CPU)
    bad = tmp_path / "bad.el"
    bad.write_text("0 1\n1 two\n")
    with pytest.raises(tristream.InputError, match="bad.el:2"):
        tristream.count(bad, **CPU)
    with pytest.raises(ValueError, match="shape"):
        tristream.count(np.arange(9).reshape(3, 3), **CPU)
    with pytest.raises(ValueError, match="non-negative"):
        tristream.count(np.array([[0, -1]]), **CPU)
    with pytest.raises(ValueError, match="integer"):
        tristream.count(np.array([[0.5, 1.0]]), **CPU)
    assert issubclass(tristream.InputError, tristream.Error)


def test_threads_count_concurrently():
    # The GIL is released while counting: several Python threads count at once, all exactly.
    graphs = [random_graph(300, 3000, seed) for seed in range(4)]
    results = [None] * len(graphs)

    def run(i):
        results[i] = tristream.count(graphs[i], backend="cpu", threads=1).triangles

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(graphs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [nx_reference(g)[0] for g in graphs]


def test_names_give_per_vertex_dicts_keyed_by_name(tmp_path):
    # Words as vertex ids (names=True, as `tristream count --names`): a triangle and a pendant.
    path = tmp_path / "named.txt"
    path.write_text("alice bob\nbob carol\ncarol alice\ncarol dave\n")
    r = tristream.count(path, backend="cpu", names=True, per_vertex=True)
    assert r.triangles == 1
    assert r.per_vertex == {"alice": 1, "bob": 1, "carol": 1, "dave": 0}
    with pytest.raises(tristream.InputError):
        tristream.count(path, backend="cpu")  # words without names=True are refused


def test_csv_options_as_keywords(tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text("source;target\n1;2\n2;3\n3;1\n")
    assert tristream.count(path, backend="cpu", delimiter=";", header=True).triangles == 1
