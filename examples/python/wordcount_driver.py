#!/usr/bin/env python3
"""WordCount with a Python driver and Python executors on a Wick cluster, standard library only:

  wordcount_driver.py --master wick://HOST:PORT --input FILE [--partitions 4] [--reducers 2]
                      [--top 20] [--output FILE] [options of pi_driver.py]

It is Spark's WordCount, textFile(FILE) -> flatMap(words) -> map((w, 1)) -> reduceByKey(add),
the most frequent --top words printed, scheduled by the driver itself in two stages around one
shuffle (Spark's DAGScheduler for this one lineage):

1. ShuffleMapStage: one task per split of FILE (its lines, as textFile splits them), with the
   transformations flatMap "words" and map "pair-with-one" and the action shuffleWrite (hash
   partitioner, --reducers reducers, combined map-side with "add"). Each returns its MapStatus,
   which the driver keeps per map partition (its MapOutputTracker).
2. ResultStage: one task per reducer, whose source is the shuffle (that reducer's block of every
   map output, with where it is, its size and CRC-32), merged with "add", and the action collect.
   The driver merges the reducers' [word, count] pairs (each word is in one reducer) and sorts
   them by count, then word.

Faults, as Spark's: an executor that is lost takes its map outputs with it; a reducer that cannot
fetch (or verify) a block fails with FetchFailed, and the driver drops every map output of that
executor. Either way, before the ResultStage runs (again) the missing map partitions are rerun
("Resubmitting ShuffleMapStage ..." in the log); --max-stage-attempts consecutive fetch failures
(wick.stage.maxConsecutiveAttempts' default, 4) fail the job.

--min-executors N waits (up to --max-registered-wait seconds, 30 by default) for N executors
before the first stage, so that its tasks spread over them (Spark's
spark.scheduler.minRegisteredResourcesRatio and maxRegisteredResourcesWaitingTime).

Standard output: "<word>: <count>" per top word, most frequent first. --output FILE also writes
every word's count there, one JSON [word, count] per line. --pause-before-reduce prints
"map stage done on executors <ids>" once the map stage is done and waits for a line on standard
input (a test kills an executor there). Exit status as pi_driver.py's.
"""

import argparse
import itertools
import json
import os
import sys

from pi_driver import FetchFailedStage, JobFailed, PiDriver, add_application_arguments, \
    run_application
from wick_rpc import log

SHUFFLE_ID = 0
ADD = {"mergeValue": {"source": "add"}, "mergeCombiners": {"source": "add"}}
MAP_TRANSFORMATIONS = [{"kind": "flatMap", "fn": {"source": "words"}},
                       {"kind": "map", "fn": {"source": "pair-with-one"}}]


class WordCountDriver(PiDriver):
    """PiDriver's scheduling, plus the map outputs of the one shuffle (Spark's MapOutputTracker):
    map partition -> its MapStatus, dropped with the executor that holds it."""

    def __init__(self, *args):
        super().__init__(*args)
        self.map_outputs = {}

    def remove_executor(self, eid, reason):
        self.drop_outputs(eid, reason)
        super().remove_executor(eid, reason)

    def drop_outputs(self, eid, reason):
        lost = sorted(m for m, st in self.map_outputs.items() if st["executorId"] == eid)
        for m in lost:
            del self.map_outputs[m]
        if lost and not self.stopping:
            log("INFO", "MapOutputTracker", "Dropped the %d map output(s) of executor %s (%s): "
                "map partitions %s" % (len(lost), eid, reason, lost))


def text_splits(path, partitions):
    """[start, end) byte ranges of the file, `partitions` of them (fewer for a small file):
    each task reads the lines that start in its range, as Wick's textFile splits."""
    size = os.path.getsize(path)
    if size == 0:
        return [(0, 0)]
    per = max(1, -(-size // partitions))
    return [(s, min(size, s + per)) for s in range(0, size, per)]


def map_status_problem(status, reducers):
    """Why a map task's result is not a MapStatus of `reducers` blocks, or None."""
    if not isinstance(status, dict):
        return "it is %s, not an object" % type(status).__name__
    for name in ("location", "executorId"):
        if not isinstance(status.get(name), str) or not 1 <= len(status[name]) <= 300:
            return "its %s is %r" % (name, status.get(name))
    for name, top in (("sizes", 2 ** 53), ("crc32s", 2 ** 32)):
        v = status.get(name)
        if not isinstance(v, list) or len(v) != reducers or \
                not all(isinstance(x, int) and 0 <= x < top for x in v):
            return "its %s is not %d whole numbers in [0, %d)" % (name, reducers, top)
    return None


def wordcount_job(driver, args):
    splits = text_splits(args.input, args.partitions)
    reducers = args.reducers
    stage_ids = itertools.count()
    map_stage = next(stage_ids)
    result_stage = next(stage_ids)
    write = {"kind": "shuffleWrite", "shuffleId": SHUFFLE_ID, "numPartitions": reducers,
             "partitioner": {"kind": "hash"}, "aggregator": ADD, "mapSideCombine": True}
    lock = driver.env.endpoint_lock(driver)
    if args.min_executors:
        driver.wait_for_executors(args.min_executors, args.max_registered_wait)
    paused = not args.pause_before_reduce
    fetch_failures = 0
    first = True
    while True:
        with lock:
            missing = [m for m in range(len(splits)) if m not in driver.map_outputs]
        if missing:
            if not first:
                log("INFO", "DAGScheduler", "Resubmitting ShuffleMapStage %d (shuffle %d): %d of "
                    "%d map outputs are missing" % (map_stage, SHUFFLE_ID, len(missing),
                                                    len(splits)))
            tasks = [({"kind": "textFile", "path": args.input, "start": splits[m][0],
                       "end": splits[m][1]}, MAP_TRANSFORMATIONS, write) for m in missing]
            stage = map_stage if first else next(stage_ids)
            statuses = driver.run_job(tasks, args.max_failures, stage_id=stage, partitions=missing)
            with lock:
                for i, (m, st) in enumerate(zip(missing, statuses)):
                    problem = map_status_problem(st, reducers)
                    if not problem and st["executorId"] != driver.job.ran_on[i]:
                        # Its outputs are dropped with the executor that ran it, no other.
                        problem = "it names executor %s, but executor %s ran it" % (
                            st["executorId"], driver.job.ran_on[i])
                    if problem:
                        raise JobFailed("Map task %d of shuffle %d returned no MapStatus: %s"
                                        % (m, SHUFFLE_ID, problem))
                    if st["executorId"] in driver.executors:  # else lost since: run it again
                        driver.map_outputs[m] = st
            with lock:
                where = sorted({"%s at %s" % (st["executorId"], st["location"])
                                for st in driver.map_outputs.values()})
            log("INFO", "DAGScheduler", "ShuffleMapStage %d (shuffle %d) done: map outputs of "
                "executors %s" % (stage, SHUFFLE_ID, ", ".join(where)))
            first = False
            continue
        first = False
        if not paused:
            paused = True
            with lock:
                holders = sorted({st["executorId"] for st in driver.map_outputs.values()})
            print("map stage done on executors %s" % " ".join(holders), flush=True)
            sys.stdin.readline()
            continue  # an executor lost meanwhile took its outputs: look again
        with lock:
            outputs = [driver.map_outputs[m] for m in range(len(splits))]
        tasks = [({"kind": "shuffle", "shuffleId": SHUFFLE_ID, "reduceId": r,
                   "blocks": [{"location": st["location"], "executorId": st["executorId"],
                               "mapId": m, "size": st["sizes"][r], "crc32": st["crc32s"][r]}
                              for m, st in enumerate(outputs)],
                   "aggregator": ADD, "mapSideCombine": True}, [], {"kind": "collect"})
                 for r in range(reducers)]
        try:
            parts = driver.run_job(tasks, args.max_failures, stage_id=result_stage)
            break
        except FetchFailedStage as e:
            fetch_failures += 1
            ff = e.error["fetchFailed"]
            log("WARN", "DAGScheduler", "ResultStage %d failed: %s (a FetchFailed of map output %d "
                "on executor %s); attempt %d of %d" % (result_stage, e, ff["mapId"],
                                                       ff["executorId"], fetch_failures,
                                                       args.max_stage_attempts))
            if fetch_failures >= args.max_stage_attempts:
                raise JobFailed("Job aborted: ResultStage %d failed %d times in a row on fetch "
                                "failures, most recent: %s" % (result_stage, fetch_failures, e))
            with lock:
                driver.drop_outputs(ff["executorId"], "a fetch from it failed")
            result_stage = next(stage_ids)
    counts = [pair for part in parts for pair in part]
    counts.sort(key=lambda wc: (-wc[1], wc[0]))
    for word, n in counts[:args.top]:
        print("%s: %d" % (word, n), flush=True)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            for pair in counts:
                out.write(json.dumps(pair, ensure_ascii=False) + "\n")
    log("INFO", "WordCount", "%d distinct words, %d in all" % (
        len(counts), sum(n for _, n in counts)))


def main(argv):
    parser = argparse.ArgumentParser(description="WordCount on Wick, with Python executors.")
    add_application_arguments(parser, "Python WordCount")
    parser.add_argument("--input", required=True, help="the text file (every worker must be "
                        "able to read it at this path)")
    parser.add_argument("--partitions", type=int, default=4, help="map tasks (default 4)")
    parser.add_argument("--reducers", type=int, default=2, help="reduce tasks (default 2)")
    parser.add_argument("--top", type=int, default=20, help="words printed (default 20)")
    parser.add_argument("--output", help="write every word's count here, JSON lines")
    parser.add_argument("--max-stage-attempts", type=int, default=4,
                        help="consecutive fetch failures that fail the job (default 4)")
    parser.add_argument("--min-executors", type=int, default=0,
                        help="wait for this many executors before the first stage (default 0)")
    parser.add_argument("--max-registered-wait", type=float, default=30.0,
                        help="seconds --min-executors waits at most (default 30)")
    parser.add_argument("--pause-before-reduce", action="store_true",
                        help="after the map stage, wait for a line on standard input")
    args = parser.parse_args(argv)
    for name in ("partitions", "reducers", "max_stage_attempts"):
        if getattr(args, name) < 1:
            parser.error("--%s must be a whole number >= 1" % name.replace("_", "-"))
    if args.top < 0:
        parser.error("--top must be a whole number >= 0")
    args.input = os.path.abspath(args.input)
    if not os.path.isfile(args.input):
        parser.error("--input %s is not a file" % args.input)
    return run_application(parser, args, WordCountDriver, wordcount_job)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
