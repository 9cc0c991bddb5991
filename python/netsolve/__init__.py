"""netsolve: EPANET network hydraulics (docs/python.md).

    r = netsolve.run("Net3.inp", duration="24h", demand_model="dda")
    r.nodes, r.links, r.tanks    # pandas DataFrames: the columns of netsolve --nodes/--links/--tanks
    r.summary                    # the run, as the program's JSON report has it (a dict)
    df = netsolve.study("Net3.inp", "fireflow", flow=1500)   # the --study-csv table

The options are the netsolve program's, by the same names with underscores (duration, solver,
demand_model, precond, minimum_pressure, ...). A network is a path, or a Network (read or parsed
once, run many times). Bad input raises ValueError with the program's message (EPANET's error
number and words), a missing file FileNotFoundError.
"""
import io
import json
import os

import numpy as np
import pandas as pd

import _cgsolve_core as _core

__all__ = ["Network", "Results", "run", "study"]


class Network:
    """An EPANET network as read: Network(path) or Network.from_string(text)."""

    def __init__(self, path=None, *, _core_network=None):
        if _core_network is not None:
            self._net = _core_network
            return
        path = os.fspath(path)
        try:
            self._net = _core._Network.from_file(path)
        except ValueError as e:
            if not os.path.exists(path):
                raise FileNotFoundError(str(e)) from None
            raise

    @classmethod
    def from_string(cls, text, name="network.inp"):
        """The text of an .inp file; name stands for its file in messages."""
        return cls(_core_network=_core._Network.from_string(text, name))

    @property
    def node_ids(self):
        return self._net.node_ids

    @property
    def link_ids(self):
        return self._net.link_ids


class Results:
    """A run's reporting times: nodes, links, tanks (DataFrames, built on first use), summary
    (dict), and completed / unbalanced / error as the program's exit code says them."""

    def __init__(self, raw):
        self._raw = raw
        self._frames = {}
        self.completed, self.unbalanced, self.error = (raw["completed"], raw["unbalanced"],
                                                       raw["error"])
        self.summary = json.loads(raw["summary_json"])

    @property
    def nodes(self):
        """time_s,node,head,pressure,demand,cut_off,required_demand,delivered_demand,deficit,
        deficit_pct,leakage: netsolve --nodes' columns."""
        return self._frame("nodes", "node", "node_ids", {}, [
            "head", "pressure", "demand", "cut_off", "required_demand", "delivered_demand",
            "deficit", "deficit_pct", "leakage"])

    @property
    def links(self):
        """time_s,link,flow,headloss,status: netsolve --links' columns."""
        return self._frame("links", "link", "link_ids", {}, ["flow", "headloss", "status"])

    @property
    def tanks(self):
        """time_s,tank,level,head,volume: netsolve --tanks' columns."""
        return self._frame("tanks", "tank", "tank_ids", {"head": "tank_head"},
                           ["level", "head", "volume"])

    def _frame(self, what, key, ids, renamed, columns):
        if what not in self._frames:
            raw = self._raw
            data = {c: raw[renamed.get(c, c)] for c in columns if c != "status"}
            if "status" in columns:
                data["status"] = pd.Categorical.from_codes(raw["open"].astype(np.int8),
                                                           categories=["closed", "open"])
            self._frames[what] = _table(raw["times"], key, raw[ids], data, columns)
        return self._frames[what]

    def __repr__(self):
        s = self.summary["series"]
        return (f"<netsolve results: {len(self.summary['steps'])} steps, "
                f"{s['reporting_times']} reporting times, completed={self.completed}>")


def _table(times, key, ids, columns, order):
    """One row per element and time; the IDs categorical (one string per element, not per row)."""
    count = len(ids)
    data = {"time_s": np.repeat(times, count),
            key: pd.Categorical.from_codes(np.tile(np.arange(count, dtype=np.int32), len(times)),
                                           categories=pd.Index(ids, dtype=object))}
    for c in order:
        data[c] = columns[c]
    return pd.DataFrame(data)


def _network(network):
    return network if isinstance(network, Network) else Network(network)


def _split(options):
    """The keywords as (duration, solver, demand_model, keep_freed_memory, the other options as
    the program's)."""
    duration = options.pop("duration", None)
    solver = options.pop("solver", "direct")
    demand_model = options.pop("demand_model", None)
    keep_freed_memory = bool(options.pop("keep_freed_memory", True))
    more = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            more.append((flag, ""))
        elif value is not False and value is not None:
            more.append((flag, str(value)))
    return ("" if duration is None else str(duration), solver, demand_model or "",
            keep_freed_memory, more)


def run(network, **options):
    """The network's hydraulics over duration (the file's DURATION without it; 0: the steady
    state), as netsolve runs it. Returns Results."""
    return Results(_core._run(_network(network)._net, *_split(dict(options))))


def study(network, kind, **options):
    """A scenario study (fireflow, closure, demand:N[:cv[:seed]]) with netsolve's study options
    (flow=, pressure_threshold=, elements=, ...). Returns the --study-csv table as a DataFrame."""
    text = _core._study(_network(network)._net, kind, *_split(dict(options)))
    return pd.read_csv(io.StringIO(text))
