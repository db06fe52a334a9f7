"""Several workers from Python (docs/scale-out.md): cpu_workers, hybrid, devices and rank_split
as keywords of count(). Several CPU workers give exactly the single worker's triangles and
per-vertex counts on a seeded graph cut into forced parts, for every scheme; the per-worker
figures appear in the result's stats; bad values raise tristream.UsageError with the command
line's wording (or TypeError for a value of the wrong type)."""

import networkx as nx
import numpy as np
import pytest

import tristream

CPU = {"backend": "cpu", "threads": 2}


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    """A seeded power-law graph with many triangles, as a .tcsr file, and networkx's counts."""
    g = nx.powerlaw_cluster_graph(600, 6, 0.4, seed=19)
    path = tmp_path_factory.mktemp("workers") / "g.tcsr"
    tristream.convert(np.array(list(g.edges())), path)
    per = nx.triangles(g)
    return path, sum(per.values()) // 3, np.array([per[v] for v in range(len(g))])


@pytest.mark.parametrize("scheme", ["range", "hash", "vertex"])
def test_cpu_workers_match_one_worker_exactly(graph, scheme):
    path, total, per = graph
    forced = {"scheme": scheme, "parts": 4, "per_vertex": True, **CPU}
    one = tristream.count(path, **forced)
    assert one.triangles == total
    assert one.per_vertex.tolist() == per.tolist()
    assert "workers" not in one.stats  # one worker: the single-worker path
    for k in (2, 3):
        r = tristream.count(path, cpu_workers=k, **forced)
        assert r.triangles == one.triangles
        assert r.per_vertex.tolist() == one.per_vertex.tolist()
        assert r.vertex_ids.tolist() == one.vertex_ids.tolist()
        assert r.plan["scheme"] == scheme and r.stats["units"] > 1
        # 2. The per-worker figures: one entry each, the units shared out among them.
        workers = r.stats["workers"]
        assert [w["worker"] for w in workers] == list(range(k))
        assert all(w["backend"] == "cpu" for w in workers)
        assert sum(w["units"] for w in workers) == r.stats["units"]
        for key in ("busy_s", "wall_s", "upload_bytes", "decompress_bytes", "work"):
            assert all(key in w for w in workers)


def test_cpu_workers_on_an_edge_array_with_clustering(graph):
    path, total, _ = graph
    edges = np.array(list(nx.powerlaw_cluster_graph(300, 5, 0.3, seed=5).edges()))
    one = tristream.count(edges, scheme="range", parts=3, clustering=True, **CPU)
    r = tristream.count(edges, scheme="range", parts=3, clustering=True, cpu_workers=2, **CPU)
    assert r.triangles == one.triangles
    assert r.per_vertex.tolist() == one.per_vertex.tolist()
    assert r.average_clustering == pytest.approx(one.average_clustering, abs=1e-12)


def test_one_cpu_worker_is_the_single_worker_count(graph):
    path, total, _ = graph
    r = tristream.count(path, cpu_workers=1, scheme="hash", parts=3, **CPU)
    assert r.triangles == total


def test_hybrid_on_the_cpu_is_exact(graph):
    path, total, per = graph
    r = tristream.count(path, hybrid=True, scheme="range", parts=4, per_vertex=True, **CPU)
    assert r.triangles == total
    assert r.per_vertex.tolist() == per.tolist()
    assert len(r.stats["workers"]) == 2
    assert sum(w["units"] for w in r.stats["workers"]) == r.stats["units"]


def test_rank_split_without_mpirun_is_accepted(graph):
    path, total, _ = graph
    for mode in ("auto", "static", "dynamic"):
        assert tristream.count(path, rank_split=mode, parts=2, **CPU).triangles == total


def test_bad_cpu_workers():
    edges = np.array([[0, 1], [1, 2], [2, 0]])
    with pytest.raises(tristream.UsageError, match=r"cpu_workers \(--workers\): at most 64"):
        tristream.count(edges, cpu_workers=65, **CPU)
    with pytest.raises(tristream.UsageError, match="cpu_workers"):
        tristream.count(edges, cpu_workers=-1, **CPU)
    with pytest.raises(TypeError, match="cpu_workers"):
        tristream.count(edges, cpu_workers="2", **CPU)
    with pytest.raises(TypeError, match="cpu_workers"):
        tristream.count(edges, cpu_workers=True, **CPU)


def test_bad_devices():
    edges = np.array([[0, 1], [1, 2], [2, 0]])
    with pytest.raises(tristream.UsageError, match="--devices: expected 'all' or device ordinals"):
        tristream.count(edges, devices="0,x")
    with pytest.raises(tristream.UsageError, match="--devices: expected"):
        tristream.count(edges, devices=[0, -1])
    with pytest.raises(tristream.UsageError, match="devices"):
        tristream.count(edges, devices=[True])
    with pytest.raises(TypeError, match="devices"):
        tristream.count(edges, devices=1.5)
    # CUDA devices with the CPU backend: the command line's advice.
    with pytest.raises(tristream.UsageError, match="--devices names CUDA devices"):
        tristream.count(edges, devices=[0, 1], **CPU)


def test_bad_rank_split():
    edges = np.array([[0, 1], [1, 2], [2, 0]])
    with pytest.raises(tristream.UsageError, match="--rank-split: expected auto, static or dyn"):
        tristream.count(edges, rank_split="sometimes", **CPU)


def test_hybrid_must_be_a_bool():
    with pytest.raises(TypeError):
        tristream.count(np.array([[0, 1]]), hybrid="yes", **CPU)
