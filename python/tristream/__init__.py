"""tristream: exact triangle counting for graphs larger than GPU memory and host RAM.

    import tristream
    r = tristream.count("graph.tcsr", backend="cpu", per_vertex=True)
    r.triangles, r.per_vertex, r.transitivity

count() takes a path (a .tcsr file or any edge list), a NumPy (m, 2) integer array of edges, or
a networkx graph; convert() writes a .tcsr file from a path or an array. Options are the command
line's, as keyword arguments with underscores (gpu_memory="4G", per_vertex=True, ...).
docs/python.md is the guide.
"""

from __future__ import annotations

import json
import os

import numpy as np

from . import _core
from ._core import DeviceError, Error, InputError, UsageError

__version__ = _core.__version__
__all__ = ["count", "convert", "Result", "Error", "InputError", "UsageError", "DeviceError"]

_COUNT_OPTIONS = ("backend", "kernel", "device", "devices", "hybrid", "cpu_workers", "rank_split",
                  "threads", "gpu_memory", "host_memory", "scheme", "parts", "per_vertex",
                  "clustering", "format", "delimiter", "header", "names", "count_isolated",
                  "tmp_dir", "quiet", "trace")
_CONVERT_OPTIONS = ("format", "delimiter", "header", "names", "memory_limit", "tmp_dir", "threads",
                    "quiet", "chunk_size", "zstd_level")
_SIZES = ("gpu_memory", "host_memory", "memory_limit", "chunk_size")
# A dense per-vertex array indexed by original id is refused beyond this many entries when the
# ids are sparse (more than 8 slots per vertex): use Result.vertex_ids with vertex_triangles.
_DENSE_LIMIT = 1 << 26


def _options(cls, names, options):
    o = cls()
    for key, value in options.items():
        if key not in names:
            raise TypeError(f"unknown option {key!r}; the options are: {', '.join(names)}")
        if key in _SIZES:
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                raise TypeError(f"{key}: expected a size like '4G' or a number of bytes")
            value = str(value)
        elif key in ("tmp_dir", "trace") and value is not None:
            value = os.fspath(value)
        elif key == "devices":
            value = _devices_text(value)
        elif key == "cpu_workers":
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError("cpu_workers: expected a number of CPU workers")
            if value < 0:  # above the limit, the library says so
                raise UsageError(f"cpu_workers (--workers): expected 0 or more, got {value}")
        setattr(o, key, value)
    return o


def _devices_text(devices):
    """devices= as the command line's --devices: "all", "0,1,3", or a sequence of ordinals."""
    if devices is None:
        return ""
    if isinstance(devices, str):
        return devices
    if isinstance(devices, int) and not isinstance(devices, bool):
        devices = [devices]
    try:
        items = list(devices)
    except TypeError:
        raise TypeError("devices: expected 'all', a list like '0,1,3' or a sequence of "
                        "CUDA ordinals") from None
    if any(isinstance(d, bool) or not isinstance(d, int) for d in items):
        raise UsageError(f"devices: expected 'all' or CUDA ordinals like [0, 1, 3], got {devices!r}")
    # A negative ordinal reaches the library as text, which refuses it with the CLI's message.
    return ",".join(str(d) for d in items)


def _is_networkx(graph):
    return hasattr(graph, "adj") and hasattr(graph, "nodes") and hasattr(graph, "is_directed")


def _edge_array(edges):
    """An (m, 2) C-contiguous uint64 or uint32 array of the edges, or raises."""
    a = np.asarray(edges)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"edges: expected an (m, 2) array, got shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise ValueError(f"edges: expected integer vertex ids, got dtype {a.dtype}")
    if a.dtype.kind == "i" and a.size and a.min() < 0:
        raise ValueError("edges: vertex ids must be non-negative")
    if a.dtype == np.uint32:
        return np.ascontiguousarray(a)
    return np.ascontiguousarray(a, dtype=np.uint64)


class Result:
    """The result of count().

    triangles, vertices, edges: counts after cleaning (self-loops dropped, duplicate and reverse
        edges merged; a vertex counts when it has an edge).
    transitivity: the global clustering coefficient, 3 triangles / wedges.
    per_vertex: with per_vertex=True (or clustering=True): each vertex's triangles, a NumPy array
        indexed by original id (ids without edges hold 0), or a dict {node: triangles} for a
        networkx graph (every node, isolated ones included).
    clustering: with clustering=True: the local clustering coefficients, aligned as per_vertex.
    average_clustering: their mean (over the graph's nodes for a networkx graph).
    vertex_ids, vertex_triangles: the compact form, the original ids ascending and their
        triangles (path and array inputs).
    stats, plan: the pipeline's measurements and the partition (dicts).
    backend, device, seconds: where and how long.
    host_budget_bytes, host_peak_bytes: the process's host budget (0 = unlimited) and its peak
        resident memory when the count returned (docs/memory.md).
    """

    def __init__(self, raw, nodes=None):
        self.triangles = raw["triangles"]
        self.vertices = raw["vertices"]
        self.edges = raw["edges"]
        self.transitivity = raw["transitivity"]
        self.backend = raw["backend"]
        self.device = raw["device"]
        self.seconds = raw["seconds"]
        self.convert_seconds = raw["convert_seconds"]
        self.count_seconds = raw["count_seconds"]
        self.host_budget_bytes = raw["host_budget_bytes"]
        self.host_peak_bytes = raw["host_peak_bytes"]
        self.stats = json.loads(raw["stats"])
        self.plan = json.loads(raw["plan"])
        self.vertex_ids = raw["vertex_ids"]
        self.vertex_triangles = raw["per_vertex"]
        self.vertex_clustering = raw["clustering"]
        self.average_clustering = raw["average_clustering"]
        self._nodes = nodes
        self._dense = {}
        if nodes is not None and self.vertex_ids is not None:
            self.average_clustering = None
            if self.vertex_clustering is not None:
                total = float(self.vertex_clustering.sum())
                self.average_clustering = total / len(nodes) if nodes else 0.0

    def _aligned(self, values, kind):
        if values is None:
            return None
        if self._nodes is not None:  # networkx: a dict over every node
            out = dict.fromkeys(self._nodes, kind(0))
            for i, v in zip(self.vertex_ids.tolist(), values.tolist()):
                out[self._nodes[i]] = v
            return out
        if id(values) not in self._dense:
            size = int(self.vertex_ids[-1]) + 1 if len(self.vertex_ids) else 0
            if size > _DENSE_LIMIT and size > 8 * len(self.vertex_ids):
                raise ValueError(f"vertex ids up to {size - 1} are too sparse for a dense array; "
                                 "use vertex_ids with vertex_triangles / vertex_clustering")
            dense = np.zeros(size, dtype=values.dtype)
            dense[self.vertex_ids] = values
            self._dense[id(values)] = dense
        return self._dense[id(values)]

    @property
    def per_vertex(self):
        return self._aligned(self.vertex_triangles, int)

    @property
    def clustering(self):
        return self._aligned(self.vertex_clustering, float)

    def __repr__(self):
        return (f"tristream.Result(triangles={self.triangles}, vertices={self.vertices}, "
                f"edges={self.edges}, transitivity={self.transitivity:.6g}, "
                f"backend={self.backend!r})")


def count(graph, **options) -> Result:
    """Counts the triangles of `graph`: a path (str or os.PathLike) to a .tcsr file or an edge
    list, a NumPy (m, 2) integer array of edges (ids >= 0), or a networkx graph (directed graphs
    are taken as undirected). Options: backend, kernel, device, devices ("all", "0,1" or
    [0, 1]: one worker per GPU), hybrid (the CPU beside the GPUs), cpu_workers (that many CPU
    workers), rank_split (under mpirun), threads, gpu_memory, host_memory, scheme, parts,
    per_vertex, clustering, format, tmp_dir, quiet, trace (the command line's meanings). The GIL is released while counting. Raises tristream.InputError
    for bad input, tristream.UsageError for a bad option value, TypeError for an unknown one."""
    o = _options(_core.CountOptions, _COUNT_OPTIONS, options)
    if isinstance(graph, (str, os.PathLike)):
        raw = _core.count_path(os.fspath(graph), o)
        # A graph with vertex names (names=True): per-vertex figures are dicts keyed by name.
        return Result(raw, raw.get("vertex_names"))
    if _is_networkx(graph):
        nodes = list(graph.nodes())
        index = {node: i for i, node in enumerate(nodes)}
        edges = np.fromiter((x for u, v in graph.edges() for x in (index[u], index[v])),
                            dtype=np.uint64, count=2 * graph.number_of_edges())
        return Result(_core.count_edges(edges.reshape(-1, 2), o), nodes)
    return Result(_core.count_edges(_edge_array(graph), o))


def convert(src, dst, **options) -> dict:
    """Converts `src` (a path to an edge list, or a NumPy (m, 2) integer array of edges) into
    the .tcsr file `dst`. Options: format, memory_limit, tmp_dir, threads, quiet, chunk_size,
    zstd_level (the command line's meanings; quiet by default). Returns the conversion's summary
    (vertices, edges, self_loops, duplicates, ...)."""
    options.setdefault("quiet", True)
    o = _options(_core.ConvertOptions, _CONVERT_OPTIONS, options)
    if isinstance(src, (str, os.PathLike)):
        return _core.convert_path(os.fspath(src), os.fspath(dst), o)
    return _core.convert_edges(_edge_array(src), os.fspath(dst), o)
