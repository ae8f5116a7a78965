#!/usr/bin/env python3
"""How the Python executor runs a task: an example-level convention, not part of the protocol.

A Wick task (LaunchTask.task, a TaskDescription) names a partition's source, the narrow
transformations to apply and the action to compute; its functions travel as JavaScript source,
which Python cannot run. So for a Python executor a function's `source` is instead the NAME of a
well-known function from FUNCTIONS below (e.g. "pi-darts"), called with the same arguments as the
JavaScript one would be, plus the function's `env` as last argument when it has one:

- sources: "range" (numbers start, start + step, ... before end), "array" (the data as given),
  "textFile" (the lines that start in bytes [start, end) of a file, as Wick's executor reads
  them), "shuffle" (a reducer's records: its blocks, which the executor fetched, combined per
  key by the source's aggregator, sorted by key when it has `ascending`);
- transformations: map, filter, flatMap, mapPartitions, mapValues, flatMapValues, keyBy, each
  with a well-known function;
- actions: "count", "collect", "take", "reduce" (fn(a, b)), "aggregate" (seqOp(acc, x), from a
  copy of zero; the driver combines the partitions' results), "foreach" (fn(x)), and
  "shuffleWrite" (a ShuffleMapStage's task: records by reducer into this executor's shuffle
  files, combined map-side by the aggregator when asked; the result is the MapStatus).

An aggregator's functions (createCombiner, mergeValue, mergeCombiners) are well-known functions
too: reduceByKey(add) is {"mergeValue": {"source": "add"}, "mergeCombiners": {"source": "add"}}.

A task whose functions are not well-known fails with an UnsupportedTask error naming them.

Run as a program, this is a task process: it reads one job per line on standard input,
{"task": TaskDescription, "place": {shuffleDir, shuffleLocation, executorId}, "blocks": [base64
of each block of a shuffle source, in its order]} ("place" and "blocks" when the task needs
them), and answers each on standard output with one line, {"ok": true, "result": R} or
{"ok": false, "error": {"name", "message", "stack"}}; it exits at the end of its input.
Anything a task prints goes to standard error.
"""

import base64
import copy
import json
import random
import sys
import traceback

from wick_keys import dict_key, key_order, partition_function
from wick_shuffle import parse_block, record_line, write_map_output


def pi_darts(acc, _x, env=None):
    """seqOp for SparkPi: throws one dart at the square [-1, 1]²; counts those in the circle."""
    x = random.random() * 2 - 1
    y = random.random() * 2 - 1
    return acc + (1 if x * x + y * y <= 1 else 0)


def add(a, b, env=None):
    return a + b


def words(line, env=None):
    """flatMap for WordCount: a line's words, split at runs of whitespace (str.split())."""
    return line.split()


def pair_with_one(x, env=None):
    """map: x -> [x, 1], WordCount's (word, 1)."""
    return [x, 1]


def swap(kv, env=None):
    return [kv[1], kv[0]]


def one(_x, env=None):
    return 1


def list_of(v, env=None):
    """createCombiner of groupByKey: a value's list."""
    return [v]


def append(c, v, env=None):
    c.append(v)
    return c


def concat(a, b, env=None):
    return a + b


def maximum(a, b, env=None):
    return a if a >= b else b


def minimum(a, b, env=None):
    return a if a <= b else b


def non_empty(x, env=None):
    return bool(x)


FUNCTIONS = {
    "pi-darts": pi_darts,
    "add": add,
    "words": words,
    "pair-with-one": pair_with_one,
    "swap": swap,
    "one": one,
    "list-of": list_of,
    "append": append,
    "concat": concat,
    "max": maximum,
    "min": minimum,
    "non-empty": non_empty,
}


class UnsupportedTask(Exception):
    pass


def function(spec, role):
    name = spec["source"]
    f = FUNCTIONS.get(name)
    if f is None:
        shown = name if len(name) <= 80 else name[:80] + "…"
        raise UnsupportedTask(
            "The Python executor runs only well-known functions (%s), and the %s function is %r"
            % (", ".join(sorted(FUNCTIONS)), role, shown))
    if "env" in spec:
        env = spec["env"]
        return lambda *args: f(*args, env)
    return f


def elements(source, blocks=None):
    kind = source["kind"]
    if kind == "shuffle":
        return shuffle_records(source, blocks)
    if kind == "array":
        return iter(source["data"])
    if kind == "range":
        start, end, step = source["start"], source["end"], source["step"]
        if all(isinstance(v, int) or float(v).is_integer() for v in (start, end, step)):
            return iter(range(int(start), int(end), int(step)))
        return _float_range(start, end, step)
    if kind == "textFile":
        return _lines(source["path"], source["start"], source["end"])
    raise UnsupportedTask("Unknown source kind %r" % kind)


def _float_range(start, end, step):
    v = start
    while (step > 0 and v < end) or (step < 0 and v > end):
        yield v
        v += step


def _lines(path, start, end):
    """The lines that start in [start, end): a split that does not begin the file skips its
    first (partial) line, and every split reads past its end to finish its last line."""
    with open(path, "rb") as f:
        pos = start
        if start > 0:
            f.seek(start - 1)
            if f.read(1) != b"\n":
                skipped = f.readline()
                pos += len(skipped)
        else:
            f.seek(0)
        while pos < end:
            line = f.readline()
            if not line:
                return
            pos += len(line)
            text = line.decode("utf-8", "replace")
            if text.endswith("\n"):
                text = text[:-1]
            if text.endswith("\r"):
                text = text[:-1]
            yield text


class Combiners:
    """An Aggregator's three functions (Aggregator in backend/protocol/task.ts): a value
    becomes a combiner with createCombiner (absent: the value itself; with `zero`:
    mergeValue(copy of zero, value))."""

    def __init__(self, agg):
        self.merge_value = function(agg["mergeValue"], "mergeValue")
        self.merge_combiners = function(agg["mergeCombiners"], "mergeCombiners")
        if "createCombiner" in agg:
            self.create = function(agg["createCombiner"], "createCombiner")
        elif "zero" in agg:
            zero = agg["zero"]
            self.create = lambda v: self.merge_value(copy.deepcopy(zero), v)
        else:
            self.create = lambda v: v


def pair_of(r):
    if not isinstance(r, list) or len(r) != 2:
        shown = json.dumps(r)[:200]
        raise ValueError("A pair operation expects [key, value] elements, got %s" % shown)
    return r


def shuffle_records(source, blocks):
    """A reducer's records (BlockStoreShuffleReader): every block's records, combined per key
    when the shuffle has an aggregator (combiners from map-side combine merged with
    mergeCombiners, else values folded with createCombiner / mergeValue), sorted by key for
    sortByKey."""
    if blocks is None or len(blocks) != len(source["blocks"]):
        raise ValueError("Shuffle %d reducer %d: %d blocks fetched, %d expected" % (
            source["shuffleId"], source["reduceId"], len(blocks or []), len(source["blocks"])))
    agg = source.get("aggregator")
    if agg is None:
        out = [r for b in blocks for r in parse_block(b)]
    else:
        c = Combiners(agg)
        combined = source.get("mapSideCombine", False)
        merge = c.merge_combiners if combined else c.merge_value
        create = (lambda x: x) if combined else c.create
        by_key = {}
        for b in blocks:
            for k, v in parse_block(b):
                dk = dict_key(k)
                had = by_key.get(dk)
                if had is None:
                    by_key[dk] = [k, create(v)]
                else:
                    had[1] = merge(had[1], v)
        out = list(by_key.values())
    if "ascending" in source:
        out.sort(key=lambda r: key_order(r[0]), reverse=not source["ascending"])
    return iter(out)


def transformed(items, transformations):
    """The narrow pipeline, lazily, as Wick's executor applies it."""
    for t in transformations:
        items = _transform(t["kind"], function(t["fn"], t["kind"]), items)
    return items


def _transform(kind, f, items):
    if kind == "map":
        return map(f, items)
    if kind == "filter":
        return filter(f, items)
    if kind == "flatMap":
        return (y for x in items for y in f(x))
    if kind == "mapPartitions":
        return iter(f(items))
    if kind == "mapValues":
        return ([k, f(v)] for k, v in map(pair_of, items))
    if kind == "flatMapValues":
        return ([k, w] for k, v in map(pair_of, items) for w in f(v))
    if kind == "keyBy":
        return ([f(x), x] for x in items)
    raise UnsupportedTask("Unknown transformation kind %r" % kind)


def shuffle_write(action, task, place, items):
    """A ShuffleMapStage's task (SortShuffleWriter without the sort): records to their reducer's
    bucket, combined per key first with mapSideCombine, then one data file and its index."""
    if not place or not place.get("shuffleDir"):
        raise ValueError("This executor has no shuffle directory: it cannot run a shuffle map "
                         "task")
    n = action["numPartitions"]
    partition = partition_function(action["partitioner"], n, task["partition"])
    buckets = [[] for _ in range(n)]
    agg = action.get("aggregator")
    records = 0
    if agg is not None and action.get("mapSideCombine"):
        c = Combiners(agg)
        by_key = {}
        for r in items:
            k, v = pair_of(r)
            dk = dict_key(k)
            had = by_key.get(dk)
            if had is None:
                by_key[dk] = [k, c.create(v)]
            else:
                had[1] = c.merge_value(had[1], v)
        for e in by_key.values():
            buckets[partition(e)].append(record_line(e))
        records = len(by_key)
    else:
        pairs = action["partitioner"]["kind"] != "roundRobin"
        for r in items:
            if pairs:
                pair_of(r)
            buckets[partition(r)].append(record_line(r))
            records += 1
    return write_map_output(place["shuffleDir"], action["shuffleId"], task["partition"], buckets,
                            place["shuffleLocation"], place["executorId"], records)


def run_task(task, place=None, blocks=None):
    """Runs one TaskDescription; returns the action's result for this partition."""
    action = task["action"]
    kind = action["kind"]
    items = transformed(elements(task["source"], blocks), task["transformations"])
    if kind == "shuffleWrite":
        return shuffle_write(action, task, place, items)
    if kind == "count":
        return sum(1 for _ in items)
    if kind == "collect":
        return list(items)
    if kind == "take":
        out = []
        for v in items:
            if len(out) >= action["n"]:
                break
            out.append(v)
        return out
    if kind == "reduce":
        f = function(action["fn"], "reduce")
        empty, acc = True, None
        for v in items:
            acc, empty = (v, False) if empty else (f(acc, v), False)
        # An empty partition contributes nothing; the driver tells it apart from a value.
        return {"empty": True} if empty else {"value": acc}
    if kind == "aggregate":
        f = function(action["seqOp"], "aggregate")
        acc = copy.deepcopy(action["zero"])
        for v in items:
            acc = f(acc, v)
        return acc
    if kind == "foreach":
        f = function(action["fn"], "foreach")
        for v in items:
            f(v)
        return None
    raise UnsupportedTask("Unknown action kind %r" % kind)


def task_error(exc):
    return {"name": type(exc).__name__, "message": str(exc), "stack": traceback.format_exc()}


def main():
    answers = sys.stdout
    sys.stdout = sys.stderr  # what a task prints must not reach the executor as an answer
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
            blocks = [base64.b64decode(b) for b in job["blocks"]] if "blocks" in job else None
            outcome = {"ok": True, "result": run_task(job["task"], job.get("place"), blocks)}
            text = json.dumps(outcome, separators=(",", ":"), allow_nan=False)
        except Exception as e:  # the task failed, or its result is not JSON
            text = json.dumps({"ok": False, "error": task_error(e)}, separators=(",", ":"))
        answers.write(text + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
