#!/usr/bin/env python3
"""How the Python executor runs a task: an example-level convention, not part of the protocol.

A Wick task (LaunchTask.task, a TaskDescription) names a partition's source, the narrow
transformations to apply and the action to compute; its functions travel as JavaScript source,
which Python cannot run. So for a Python executor a function's `source` is instead the NAME of a
well-known function from FUNCTIONS below (e.g. "pi-darts"), called with the same arguments as the
JavaScript one would be, plus the function's `env` as last argument when it has one:

- sources: "range" (numbers start, start + step, ... before end), "array" (the data as given),
  "textFile" (the lines that start in bytes [start, end) of a file, as Wick's executor reads
  them);
- transformations: none (a task with any is refused);
- actions: "count", "collect", "take", "reduce" (fn(a, b)), "aggregate" (seqOp(acc, x), from a
  copy of zero; the driver combines the partitions' results), "foreach" (fn(x)).

A task whose functions are not well-known fails with an UnsupportedTask error naming them.

Run as a program, this is a task process: it reads one task (a TaskDescription as JSON) per line
on standard input and answers each on standard output with one line, {"ok": true, "result": R}
or {"ok": false, "error": {"name", "message", "stack"}}; it exits at the end of its input.
Anything a task prints goes to standard error.
"""

import copy
import json
import random
import sys
import traceback


def pi_darts(acc, _x, env=None):
    """seqOp for SparkPi: throws one dart at the square [-1, 1]²; counts those in the circle."""
    x = random.random() * 2 - 1
    y = random.random() * 2 - 1
    return acc + (1 if x * x + y * y <= 1 else 0)


def add(a, b, env=None):
    return a + b


FUNCTIONS = {
    "pi-darts": pi_darts,
    "add": add,
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


def elements(source):
    kind = source["kind"]
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


def run_task(task):
    """Runs one TaskDescription; returns the action's result for this partition."""
    if task["transformations"]:
        kinds = ", ".join(t["kind"] for t in task["transformations"])
        raise UnsupportedTask("The Python executor runs tasks without transformations; this one "
                              "has %s" % kinds)
    action = task["action"]
    kind = action["kind"]
    items = elements(task["source"])
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
            outcome = {"ok": True, "result": run_task(json.loads(line))}
            text = json.dumps(outcome, separators=(",", ":"), allow_nan=False)
        except Exception as e:  # the task failed, or its result is not JSON
            text = json.dumps({"ok": False, "error": task_error(e)}, separators=(",", ":"))
        answers.write(text + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
