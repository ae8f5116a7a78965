#!/usr/bin/env python3
"""SparkPi with a Python driver and Python executors on a Wick cluster, standard library only.

  pi_driver.py --master wick://HOST:PORT [--slices 2] [--samples-per-slice 100000]
               [--conf KEY=VALUE ...]

It is a listening peer, as a Spark driver is: executors connect to it. Step by step (the
conversations of docs/protocol.md, "Applications and executors"):

1. It listens (--host, --port; port 0 picks a free one) and hosts two endpoints: "AppClient",
   which the master talks to, and "CoarseGrainedScheduler", which executors talk to.
2. It connects to the master, checks that "Master" exists, and sends RegisterApplication, whose
   command launches executor.py (this folder) with the worker's {{VARIABLES}}. The master sends
   RegisteredApplication (with the application's key, which from then on its env asks of every
   peer that dials it: only its executors hold it), then ExecutorAdded for each executor it
   grants and ExecutorUpdated as they change state.
3. Each executor asks RetrieveAppConfig (answered AppConfig) and RegisterExecutor (answered
   RegisteredExecutor), and the driver sends the master ExecutorRegistered for it (the master
   counts executor failures in a row until one registers). The driver sends LaunchTask, over the
   connection the executor registered on, for as many tasks as it has free cores; the executor
   sends StatusUpdate RUNNING, then FINISHED with the partition's result (counted only from the
   executor the task was launched on, over that connection).
   A failed task is retried, on another executor if it can, up to --max-failures attempts; the
   tasks of an executor that is lost run again elsewhere.
4. It prints "Pi is roughly ...", sends StopExecutor to each executor, waits for them to hang
   up, sends UnregisterApplication to the master, and closes its connections.

Each task is a 'range' of --samples-per-slice numbers, no transformations, and an 'aggregate'
action whose seqOp is the well-known function "pi-darts" (see wick_tasks.py): the Python
executor runs Python functions by name, not JavaScript source.

Authentication, as Wick's own driver (wick_auth.driver_auth): with a submission's key in
WICK_APP_CREDENTIAL when `wick submit` or a worker started it; else with the cluster secret,
found the way every Wick process finds it: --conf wick.authenticate.secret=..., the file in
--conf wick.authenticate.secret.file=..., WICK_AUTH_SECRET, then the default secret file
$XDG_CONFIG_HOME/wick/cluster-secret (~/.config/wick/cluster-secret), where a master writes the
one it generates. --conf wick.authenticate=false, or no secret anywhere, runs open, as a cluster
started with wick.authenticate=false does. Executors never get the secret: their worker hands
each the key of its application. Other --conf settings go to the executors in AppConfig.props.
WICK_MASTER stands in for --master.

Standard output: "Pi is roughly <value>". Standard error: the log. Exit status 0 when the job
succeeded, 1 when it failed, 130 / 143 when interrupted.

wordcount_driver.py reuses this driver (PiDriver's scheduling, run_application, the options of
add_application_arguments) for a job of two stages.
"""

import argparse
import getpass
import os
import signal
import socket
import sys
import threading
import time
from collections import deque

from wick_auth import driver_auth, parse_conf, principal_text, without_secrets
from wick_tls import WireTls
from wick_rpc import (Endpoint, Refused, RpcEnv, RpcError, endpoint_uri, host_port, log,
                      parse_address, unsupported)

HERE = os.path.dirname(os.path.abspath(__file__))
EXECUTOR = os.path.join(HERE, "executor.py")
SCHEDULER = "CoarseGrainedScheduler"  # the endpoint executors talk to (Spark's name)
APP_CLIENT = "AppClient"  # the endpoint the master talks to
FINISHED_EXECUTOR_STATES = ("KILLED", "FAILED", "LOST", "EXITED")
FROM_MASTER = ("RegisteredApplication", "ExecutorAdded", "ExecutorUpdated", "WorkerRemoved",
               "ApplicationRemoved", "MasterChanged")
NO_RESOURCES_WARNING_S = 15


class Job:
    """The tasks of one task set (a stage attempt): one per partition, each with its result once
    it finished. A driver that runs several stages (wordcount_driver.py) runs one after another;
    a task of an earlier one that ends later is ignored (Spark's zombie task set)."""

    def __init__(self, tasks, max_failures, stage_id=0, job_id=0):
        self.tasks = tasks  # partition -> (source, transformations, action)
        self.stage_id = stage_id
        self.job_id = job_id
        self.partitions = None  # the stage's partition of each task, when not 0..n-1
        self.max_failures = max_failures
        self.fetch_failed = None  # the TaskError of a reducer that could not read a map output
        self.pending = deque(range(len(tasks)))
        self.results = {}
        self.ran_on = {}  # partition -> the executor whose result counted
        self.failures = [0] * len(tasks)
        self.failed_on = [set() for _ in tasks]
        self.error = None
        self.done = threading.Event()

    def fail(self, message):
        if not self.done.is_set():
            self.error = message
            self.done.set()


class PiDriver(Endpoint):
    """Both endpoints of the driver: AppClient (the master's side) and CoarseGrainedScheduler
    (the executors' side). The env runs one of its handlers at a time."""

    def __init__(self, env, app_dir, props, masters):
        self.env = env
        self.app_dir = app_dir
        self.props = props
        self.masters = masters  # the addresses this application may follow
        self.app_id = None
        self.master = None  # (address, name) of the master that accepted the application
        self.registered = threading.Event()
        self.removed = None  # why the master ended the application
        # executorId -> {conn (the connection it registered on), name, cores, free}
        self.executors = {}
        self.running = {}  # taskId -> (partition, executorId, attempt, job)
        self.next_task_id = 0
        self.job = None
        self.stopping = False
        self.changed = threading.Condition(threading.Lock())

    # ---- the master's side (AppClient) ----

    def receive(self, message, ctx):
        kind = message["type"]
        if kind in FROM_MASTER:
            if ctx.to != APP_CLIENT:
                raise unsupported(message, ctx)
            problem = self.master_problem(kind, message, ctx.connection)
            if problem:
                raise Refused(kind, problem)
        if kind == "RegisteredApplication":
            self.registered_application(message)
        elif kind == "ExecutorAdded":
            log("INFO", "AppClient", "Executor added: %s/%d on %s (%s) with %d core(s)"
                % (self.app_id, message["id"], message["workerId"], message["hostPort"],
                   message["cores"]))
        elif kind == "ExecutorUpdated":
            state = message["state"]
            log("INFO", "AppClient", "Executor updated: %s/%d is now %s%s"
                % (self.app_id, message["id"], state,
                   " (%s)" % message["message"] if message.get("message") else ""))
            if state in FINISHED_EXECUTOR_STATES:
                self.remove_executor(str(message["id"]), message.get("message") or state)
        elif kind == "WorkerRemoved":
            log("INFO", "AppClient", "Worker %s removed: %s" % (message["id"], message["message"]))
        elif kind == "ApplicationRemoved":
            self.removed = message["message"]
            log("ERROR", "AppClient", "Master removed our application: %s" % message["message"])
            if self.job:
                self.job.fail("Master removed our application: %s" % message["message"])
            self.registered.set()
        elif kind == "MasterChanged":
            self.master = (message["master"]["address"], message["master"]["name"])
            log("INFO", "AppClient", "Master has changed, new master is at wick://%s"
                % self.master[0])
            self.env.send(self.master[0], self.master[1],
                          {"type": "MasterChangeAcknowledged", "appId": self.app_id})
        elif kind == "StatusUpdate" and ctx.to == SCHEDULER:
            self.status_update(message, ctx)
        else:
            raise unsupported(message, ctx)

    def master_problem(self, kind, message, conn):
        """Why a message of the master's may not come over `conn`, or None when it may: over the
        connection this driver dialled to the master it follows; MasterChanged also from a master
        of ours that dials us proving this application's key (a new leader, after a failover)."""
        if kind == "MasterChanged":
            named = message["master"]["address"]
            if named not in self.masters:
                return "it names %s, which is not one of this application's masters (%s)" % (
                    named, ", ".join(self.masters))
            p = conn.principal
            if p.kind in ("open", "cluster") or (p.kind == "app" and p.id == self.app_id):
                return None
            return "the sender proved %s, not this application's key" % p.text()
        if not conn.outbound:
            return ("it came over a connection the sender opened; the master is heard over the "
                    "connection this driver dials to it")
        if kind != "RegisteredApplication" and self.master and self.master[0] != conn.peer:
            return "it came from %s, and this application follows %s" % (conn.peer, self.master[0])
        return None

    def registered_application(self, message):
        app_id, key = message["appId"], message.get("appKey")
        keys = self.env.keys
        if keys is not None and key is None:
            # A Wick master that authenticates always sends it: without it no executor gets in.
            self.removed = ("the master registered %s without its key (appKey), so this driver "
                            "cannot let its executors in" % app_id)
            log("ERROR", "AppClient", self.removed)
            self.registered.set()
            return
        if keys is not None:
            keys.add(app_id, key)
        self.app_id = app_id
        self.master = (message["master"]["address"], message["master"]["name"])
        log("INFO", "AppClient", "Connected to Wick cluster with app ID %s" % self.app_id)
        self.registered.set()

    # ---- the executors' side (CoarseGrainedScheduler) ----

    def receive_and_reply(self, message, ctx):
        if ctx.to != SCHEDULER:
            raise unsupported(message, ctx)
        kind = message["type"]
        if kind == "RetrieveAppConfig":
            return {"type": "AppConfig", "appId": self.app_id or "", "props": self.props,
                    "appDir": self.app_dir}
        if kind == "RegisterExecutor":
            eid = message["executorId"]
            p = ctx.principal
            if p.kind not in ("open", "cluster") and (p.kind, p.id) != ("app", self.app_id):
                raise Refused(kind, "only executors of %s may register here"
                              % principal_text("app", self.app_id))
            if self.stopping:
                return {"type": "RegisterExecutorFailed", "message": "The application is stopping"}
            if eid in self.executors:
                return {"type": "RegisterExecutorFailed",
                        "message": "Duplicate executor ID: %s" % eid}
            ref = message["executor"]
            # Its tasks go out over the connection it registered on (never to the address it
            # names, which anyone could name), and only its StatusUpdates count.
            self.executors[eid] = {"conn": ctx.connection, "name": ref["name"],
                                   "cores": message["cores"], "free": message["cores"]}
            log("INFO", "DriverEndpoint", "Registered executor %s (%s) with ID %s, %d core(s)"
                % (endpoint_uri(ref["address"], ref["name"]), message["hostname"], eid,
                   message["cores"]))
            if eid.isdigit() and self.master:
                # It serves the application: the master stops counting executor failures in a row.
                self.env.send(self.master[0], self.master[1],
                              {"type": "ExecutorRegistered", "execId": int(eid)})
            with self.changed:
                self.changed.notify_all()
            ctx.later(self.make_offers)  # LaunchTask must follow the reply, not precede it
            return {"type": "RegisteredExecutor"}
        raise unsupported(message, ctx)

    def status_update(self, m, ctx):
        tid, state, eid = m["taskId"], m["state"], m["executorId"]
        what = "StatusUpdate of task %d" % tid
        registered = self.executors.get(eid)
        if registered is None or registered["conn"] is not ctx.connection:
            raise Refused(what, "only executor %s may send it, over the connection it registered "
                          "on" % eid)
        launched_on = self.running.get(tid, (None, eid, None, None))[1]
        if launched_on != eid:
            raise Refused(what, "task %d was launched on executor %s, not %s"
                          % (tid, launched_on, eid))
        if state in ("LAUNCHING", "RUNNING") or tid not in self.running:
            return
        partition, eid, attempt, job = self.running.pop(tid)
        executor = self.executors.get(eid)
        if executor is not None:
            executor["free"] += 1
        if job.done.is_set():
            self.make_offers()
            return
        if state == "FINISHED":
            job.results[partition] = m.get("result")
            job.ran_on[partition] = eid
            if len(job.results) == len(job.tasks):
                job.done.set()
        else:
            error = m.get("error") or {"name": "TaskFailed",
                                       "message": "Task %d ended %s" % (tid, state)}
            log("WARN", "TaskSetManager", "Lost task %d.%d in stage %d.0 (TID %d, executor %s): "
                "%s: %s" % (partition, attempt, job.stage_id, tid, eid, error["name"],
                            error["message"]))
            self.task_failed(partition, eid, tid, attempt, error)
        self.make_offers()

    def task_failed(self, partition, eid, tid, attempt, error):
        job = self.job
        if error.get("name") == "FetchFailed" and error.get("fetchFailed"):
            # Not the task's fault: its parent stage's output is gone. The stage ends here and
            # the driver recomputes that output (Spark's DAGScheduler), without counting a failure.
            job.fetch_failed = error
            job.done.set()
            return
        job.failures[partition] += 1
        job.failed_on[partition].add(eid)
        if job.failures[partition] >= job.max_failures:
            job.fail("Job aborted due to stage failure: Task %d in stage %d.0 failed %d times, "
                     "most recent failure: Lost task %d.%d in stage %d.0 (TID %d, executor %s): %s"
                     % (partition, job.stage_id, job.failures[partition], partition,
                        job.stage_id, attempt, tid, eid,
                        error.get("stack") or "%s: %s" % (error["name"], error["message"])))
        else:
            job.pending.appendleft(partition)

    def remove_executor(self, eid, reason):
        """The executor is gone (the master said so, or its connection dropped): rerun its tasks."""
        if self.executors.pop(eid, None) is None:
            return
        lost = [(tid, t) for tid, t in self.running.items() if t[1] == eid]
        for tid, _ in lost:
            del self.running[tid]
        lost = [t for t in lost if not t[1][3].done.is_set()]  # the others need no rerun
        for _, (partition, _, _, job) in lost:
            job.pending.appendleft(partition)
        log("INFO", "DriverEndpoint", "Removed executor %s: %s%s"
            % (eid, reason, "; rerunning its %d task(s) elsewhere" % len(lost) if lost else ""))
        with self.changed:
            self.changed.notify_all()
        self.make_offers()

    def on_disconnected(self, address):
        for eid, e in list(self.executors.items()):
            if e["conn"].peer == address:
                self.remove_executor(eid, "Executor %s disconnected" % eid)
        with self.changed:
            self.changed.notify_all()

    def make_offers(self):
        """Offers every executor's free cores to the pending tasks, and launches what fits."""
        job = self.job
        if job is None or job.done.is_set() or self.stopping:
            return
        while job.pending:
            free = [(eid, e) for eid, e in self.executors.items() if e["free"] > 0]
            if not free:
                return
            partition = job.pending.popleft()
            # A retry prefers an executor it has not failed on.
            eid, e = next(((i, x) for i, x in free if i not in job.failed_on[partition]), free[0])
            tid = self.next_task_id
            self.next_task_id += 1
            attempt = job.failures[partition]
            source, transformations, action = job.tasks[partition]
            task = {"taskId": tid, "jobId": job.job_id, "stageId": job.stage_id,
                    "partition": partition if job.partitions is None else job.partitions[partition],
                    "attempt": attempt, "source": source, "transformations": transformations,
                    "action": action}
            e["free"] -= 1
            self.running[tid] = (partition, eid, attempt, job)
            try:
                self.env.send_over(e["conn"], e["name"], {"type": "LaunchTask", "task": task})
            except RpcError as err:
                del self.running[tid]
                job.pending.appendleft(partition)
                self.executors.pop(eid, None)
                log("WARN", "DriverEndpoint", "Could not launch task %d on executor %s: %s"
                    % (tid, eid, err.message))

    # ---- the driver's main thread ----

    def run_job(self, tasks, max_failures, stage_id=0, job_id=0, partitions=None):
        """Runs one task set to its end; its results in task order. Raises JobFailed, or
        FetchFailedStage when a reducer could not read a map output."""
        with self.env.endpoint_lock(self):
            self.job = Job(tasks, max_failures, stage_id, job_id)
            self.job.partitions = partitions
            if self.removed is not None:
                self.job.fail("Master removed our application: %s" % self.removed)
            self.make_offers()
        warned_at = time.monotonic()
        while not self.job.done.wait(1.0):  # a timeout, so that signal handlers run promptly
            if time.monotonic() - warned_at >= NO_RESOURCES_WARNING_S and not self.executors:
                warned_at = time.monotonic()
                log("WARN", "TaskScheduler", "Initial job has not accepted any resources; check "
                    "your cluster UI to ensure that workers are registered and have sufficient "
                    "resources")
        if self.job.error:
            raise JobFailed(self.job.error)
        if self.job.fetch_failed:
            raise FetchFailedStage(self.job.fetch_failed)
        return [self.job.results[i] for i in range(len(tasks))]

    def wait_for_executors(self, n, timeout):
        """Spark's minRegisteredResourcesRatio, as a count: waits (up to `timeout` seconds) until
        `n` executors have registered, so that a first stage spreads over them."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(self.executors) < n and self.removed is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    log("WARN", "DriverEndpoint", "%d of %d executors registered after %.0f s; "
                        "starting anyway" % (len(self.executors), n, timeout))
                    return
                self.changed.wait(min(left, 1.0))

    def stop(self, patience=10.0):
        """StopExecutor to each executor; wait for them to hang up; UnregisterApplication."""
        with self.env.endpoint_lock(self):
            self.stopping = True
            if self.job:
                self.job.fail(self.job.error or "The application was stopped")
            executors = list(self.executors.values())
        for e in executors:
            try:
                self.env.send_over(e["conn"], e["name"], {"type": "StopExecutor"})
            except RpcError:
                pass  # already gone
        deadline = time.monotonic() + patience
        with self.changed:
            while any(not e["conn"].closed for e in executors):
                left = deadline - time.monotonic()
                if left <= 0:
                    log("WARN", "DriverEndpoint", "Executors still connected %.0f s after "
                        "StopExecutor; the master will kill them" % patience)
                    break
                self.changed.wait(min(left, 0.5))
        if self.master and self.app_id and self.removed is None:
            try:
                self.env.send(self.master[0], self.master[1],
                              {"type": "UnregisterApplication", "appId": self.app_id})
            except RpcError as err:
                log("WARN", "AppClient", "Could not unregister: %s" % err.message)
        self.env.stop()
        log("INFO", "PiDriver", "Stopped application %s" % self.app_id)


class JobFailed(Exception):
    pass


class FetchFailedStage(Exception):
    """A reduce stage ended by a FetchFailed: `error` is the task's TaskError."""

    def __init__(self, error):
        super().__init__(error["message"])
        self.error = error


class Interrupted(Exception):
    pass


def route_address(masters):
    """This host's address on the route to the first master that has one: what executors on the
    workers reach (a connected UDP socket sends nothing; the kernel picks the source address).
    Loopback only when the master is on loopback."""
    for m in masters:
        host, port = parse_address(m)
        try:
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((host, port))
                return s.getsockname()[0]
        except OSError:
            continue
    return "127.0.0.1"


def parse_master_urls(text):
    """wick://h1:p1,h2:p2 (or several wick:// URLs, comma-separated) -> ["h1:p1", "h2:p2"]."""
    out = []
    for part in text.replace("wick://", "").split(","):
        part = part.strip().rstrip("/")
        if part:
            host, port = parse_address(part)
            out.append(host_port(host, port))
    if not out:
        raise ValueError("expected wick://host:port, got %r" % text)
    return out


def add_application_arguments(parser, name):
    """The options every driver of this folder takes (the application's, not its job's)."""
    parser.add_argument("--master", default=os.environ.get("WICK_MASTER"),
                        help="wick://host:port (several: comma-separated); else WICK_MASTER")
    parser.add_argument("--name", default=name, help="the application's name")
    parser.add_argument("--host", help="the address executors reach us at (default: this host's "
                        "address on the route to the master, as Wick's own driver)")
    parser.add_argument("--port", type=int, default=0, help="our port (default 0: any free one)")
    parser.add_argument("--executor-memory", type=int, default=512, help="MiB per executor")
    parser.add_argument("--executor-cores", type=int, help="cores per executor (default: all "
                        "of a worker's free cores)")
    parser.add_argument("--total-executor-cores", type=int, help="cores for the whole application")
    parser.add_argument("--python", default="python3", help="the executors' Python (default "
                        "python3)")
    parser.add_argument("--max-failures", type=int, default=4, help="attempts per task")
    parser.add_argument("--registration-timeout", type=float, default=20.0, help="seconds")
    parser.add_argument("--executor-arg", action="append", default=[], metavar="ARG",
                        help="one more argument for executor.py, e.g. --executor-arg=--trace "
                        "(repeatable)")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Wick setting, e.g. wick.authenticate=false (repeatable)")
    parser.add_argument("--trace", action="store_true", help="print every frame on stderr")


def run_application(parser, args, driver_class, job):
    """Listens, registers the application with the master, runs `job(driver, args)` (which
    prints its answer), then stops the executors and unregisters, whatever happened. Returns the
    exit status: 0, 1 when the job failed, 128 + the signal when interrupted."""
    if not args.master:
        parser.error("A master URL must be set: pass --master wick://host:port or set WICK_MASTER")
    try:
        masters = parse_master_urls(args.master)
        conf = parse_conf(args.conf)
        credential, keys, auth = driver_auth(conf)
        tls = WireTls.from_conf(conf)
    except ValueError as e:
        parser.error(str(e))
    for address in masters:
        tls.note_master(address)  # its certificate must be a pinned one, when any is pinned

    host = args.host or route_address(masters)
    try:
        env = RpcEnv("pyDriver", host=host, port=args.port, credential=credential, keys=keys,
                     trace=args.trace, tls=tls)
    except (OSError, RuntimeError, ValueError) as e:
        print("error: cannot listen on %s:%d: %s" % (host, args.port, e.strerror or e),
              file=sys.stderr)
        return 1
    log("INFO", "RpcEnv", "Listening on %s (authentication %s)"
        % (env.address, auth if credential is None else "on: " + auth))
    props = dict(without_secrets(conf), **{"wick.app.name": args.name, "wick.master": args.master})
    driver = driver_class(env, HERE, props, masters)
    env.setup_endpoint(SCHEDULER, driver)
    env.setup_endpoint(APP_CLIENT, driver)

    argv_executor = [args.python, EXECUTOR, "--driver-url", "{{DRIVER_URL}}",
                     "--executor-id", "{{EXECUTOR_ID}}", "--hostname", "{{HOSTNAME}}",
                     "--cores", "{{CORES}}", "--app-id", "{{APP_ID}}",
                     "--worker-url", "{{WORKER_URL}}"] + args.executor_arg
    desc = {"name": args.name, "user": user(), "memoryPerExecutorMB": args.executor_memory,
            "command": {"argv": argv_executor, "env": tls.child_env()},
            "driverUrl": endpoint_uri(env.address, SCHEDULER)}
    if args.executor_cores:
        desc["coresPerExecutor"] = args.executor_cores
    if args.total_executor_cores:
        desc["maxCores"] = args.total_executor_cores

    interrupted = []

    def on_signal(signum, _frame):
        interrupted.append(signum)
        raise Interrupted("Received %s" % signal.Signals(signum).name)

    try:
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        register(env, driver, masters, desc, args.registration_timeout)
        job(driver, args)
        status = 0
    except (RpcError, JobFailed) as e:
        print("error: %s" % (e.message if isinstance(e, RpcError) else e), file=sys.stderr,
              flush=True)
        status = 1
    except Interrupted as e:
        log("WARN", "PiDriver", "%s: stopping the application" % e)
        status = 128 + interrupted[0]
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    driver.stop()
    return status


def pi_job(driver, args):
    n = args.samples_per_slice
    tasks = [({"kind": "range", "start": i * n, "end": (i + 1) * n, "step": 1}, [],
              {"kind": "aggregate", "zero": 0, "seqOp": {"source": "pi-darts"}})
             for i in range(args.slices)]
    inside = sum(driver.run_job(tasks, args.max_failures))
    print("Pi is roughly %r" % (4.0 * inside / (n * args.slices)), flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description="SparkPi on Wick, with Python executors.")
    add_application_arguments(parser, "Python Pi")
    parser.add_argument("--slices", type=int, default=2, help="tasks (default 2)")
    parser.add_argument("--samples-per-slice", type=int, default=100000,
                        help="darts per task (default 100000)")
    args = parser.parse_args(argv)
    if args.slices < 1 or args.samples_per_slice < 1:
        parser.error("--slices and --samples-per-slice must be whole numbers >= 1")
    return run_application(parser, args, PiDriver, pi_job)


def register(env, driver, masters, desc, timeout):
    """RegisterApplication to every master we can reach; waits until one accepts."""
    reached, errors = [], []
    for address in masters:
        try:
            env.setup_endpoint_ref(address, "Master")
            log("INFO", "AppClient", "Connecting to master wick://%s..." % address)
            env.send(address, "Master", {"type": "RegisterApplication", "appDescription": desc,
                                         "driver": {"address": env.address, "name": APP_CLIENT}})
            reached.append(address)
        except RpcError as e:
            errors.append("wick://%s: %s" % (address, e.message))
    if not reached:
        raise RpcError(-32012, "Cannot reach a master. Tried:\n  %s" % "\n  ".join(errors))
    if not driver.registered.wait(timeout):
        raise RpcError(-32010, "No master accepted the application within %.0f s (masters: %s)"
                       % (timeout, ", ".join(reached)))
    if driver.removed is not None:
        raise RpcError(-32000, "Master removed our application: %s" % driver.removed)


def user():
    try:
        return getpass.getuser()[:200]
    except Exception:  # no user name in this environment
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
