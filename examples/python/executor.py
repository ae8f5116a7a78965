#!/usr/bin/env python3
"""A Wick executor in plain Python 3 (Spark's CoarseGrainedExecutorBackend), for pi_driver.py.

A worker launches it with the command of the application description, its {{VARIABLES}} filled:

  executor.py --driver-url wick://HOST:PORT/CoarseGrainedScheduler --executor-id ID
              --hostname HOST --cores N --app-id APP [--worker-url wick://HOST:PORT/Worker]
              [--trace] [--log-env-names]

It is a client-mode peer: it connects to the driver, asks RetrieveAppConfig, then
RegisterExecutor; then it runs each LaunchTask on one of N task processes (wick_tasks.py, one per
core, so that N tasks really run at once) and sends StatusUpdate RUNNING, then FINISHED with the
result or FAILED with the error (KILLED after a KillTask). It exits on StopExecutor (status 0),
when its connection to the driver or to its worker drops (1), or on SIGTERM (143).

Shuffles (docs/protocol.md, "Shuffles"; wick_shuffle.py): a map task's output goes to
blockmgr-<executorId> under the application's local dir (WICK_EXECUTOR_DIRS), and a server on an
RpcEnv of its own (listening on every interface, named by --hostname) serves it to reducers at
the endpoint ShuffleBlocks, letting in only this application's key. Before a reduce task runs,
its blocks are fetched from the executors that hold them; one that cannot be fetched or does not
match its size and CRC-32 fails the task with FetchFailed.

How a Python executor interprets a task (well-known function names instead of JavaScript) is an
example-level convention, described in wick_tasks.py and README.md.

Environment: WICK_APP_CREDENTIAL, app:<appId>:<key>, the key of this executor's application,
which its worker derives from the cluster secret (unset when the cluster runs open: the executor
then runs open too). It proves that key to its driver and to its worker, and holds nothing else:
never the cluster secret, which the worker keeps out of its executors' environment.
WICK_LOG_URL_STDOUT / _STDERR, set by the worker, are sent to the driver as this executor's log
URLs. --log-env-names logs the names (never the values) of the environment it was started with.

Standard output: a line per task start and end (what a user reads in the worker's UI); standard
error: the log.
"""

import argparse
import base64
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from wick_auth import APP_CREDENTIAL_ENV, handed_credential
from wick_rpc import Endpoint, Refused, RpcEnv, RpcError, log, parse_endpoint_uri, unsupported
from wick_shuffle import SHUFFLE_ENDPOINT, FetchFailed, ShuffleBlockServer, fetch_blocks
from wick_tls import WireTls

HERE = os.path.dirname(os.path.abspath(__file__))
TASK_PROGRAM = os.path.join(HERE, "wick_tasks.py")


def say(text):
    """A line for the user, on standard output."""
    log("INFO", "Executor", text, stream=sys.stdout)


class TaskSlot:
    """One core: a thread that feeds tasks to its own task process, one at a time."""

    def __init__(self, runner, index):
        self.runner = runner
        self.index = index
        self.process = None
        self.task_id = None
        threading.Thread(target=self.loop, name="task-slot-%d" % index, daemon=True).start()

    def start_process(self):
        self.process = subprocess.Popen(
            [sys.executable, TASK_PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True, encoding="utf-8", bufsize=1)
        say("Started task process %d (pid %d)" % (self.index, self.process.pid))

    def loop(self):
        while True:
            task = self.runner.queue.get()
            if task is None:
                return
            self.run(task)

    def run(self, task):
        r = self.runner
        tid = task["taskId"]
        name = "task %d.%d in stage %d.0 (TID %d)" % (
            task["partition"], task["attempt"], task["stageId"], tid)
        with r.lock:
            if r.stopping:
                return
            if tid in r.killed:
                r.report(tid, "KILLED", error={"name": "TaskKilled", "message": r.killed.pop(tid)})
                return
            if self.process is None or self.process.poll() is not None:
                self.start_process()
            self.task_id = tid
            r.running[tid] = self
        say("Running %s" % name)
        r.report(tid, "RUNNING")
        started = time.monotonic()
        job = {"task": task, "place": r.place}
        if task["source"]["kind"] == "shuffle":
            # A reducer's blocks are fetched here, where the executor's RpcEnv is, and go to the
            # task process with the task (as Wick's executor hands them to its task thread).
            try:
                job["blocks"] = [base64.b64encode(b).decode("ascii")
                                 for b in r.fetch(task["source"])]
            except FetchFailed as e:
                log("WARN", "Executor", str(e))
                with r.lock:
                    r.running.pop(tid, None)
                    self.task_id = None
                    r.killed.pop(tid, None)
                r.report(tid, "FAILED", error={"name": "FetchFailed", "message": str(e),
                                               "fetchFailed": e.fetch_failed},
                         ms=(time.monotonic() - started) * 1000)
                return
        answer = None
        try:
            self.process.stdin.write(json.dumps(job, separators=(",", ":")) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        except (OSError, ValueError):
            pass
        ms = (time.monotonic() - started) * 1000
        with r.lock:
            r.running.pop(tid, None)
            self.task_id = None
            killed = r.killed.pop(tid, None)
            if r.stopping:
                return
        if killed is not None:
            say("Killed %s: %s" % (name, killed))
            r.report(tid, "KILLED", error={"name": "TaskKilled", "message": killed}, ms=ms)
            return
        try:
            outcome = json.loads(answer) if answer else None
        except ValueError:
            outcome = None
        if outcome is None:
            code = self.process.wait()
            error = {"name": "TaskProcessLost",
                     "message": "The task process exited with status %s while running %s"
                     % (code, name)}
        elif outcome.get("ok"):
            say("Finished %s in %.0f ms" % (name, ms))
            r.report(tid, "FINISHED", result=outcome.get("result"), ms=ms)
            return
        else:
            error = outcome["error"]
        log("ERROR", "Executor", "Exception in %s\n%s" % (name, error.get("stack")
                                                          or "%s: %s" % (error["name"], error["message"])))
        r.report(tid, "FAILED", error=error, ms=ms)

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()

    def stop(self):
        p = self.process
        if p is None:
            return
        try:
            p.stdin.close()  # a task process ends at the end of its input
        except OSError:
            pass
        if p.poll() is None and self.task_id is not None:
            p.kill()  # a task still running: stopping does not wait for it
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class TaskRunner:
    """Runs up to `cores` tasks at once; reports each task's status through `send`."""

    def __init__(self, executor_id, cores, send, place=None, fetch=None):
        self.executor_id = executor_id
        self.send = send
        self.place = place  # where map tasks write and what their MapStatus names
        self.fetch = fetch  # a shuffle source -> its blocks (wick_shuffle.fetch_blocks)
        self.queue = queue.Queue()
        self.lock = threading.Lock()
        self.running = {}  # taskId -> TaskSlot
        self.killed = {}  # taskId -> reason, for tasks killed before they ended
        self.stopping = False
        self.slots = [TaskSlot(self, i) for i in range(cores)]

    def launch(self, task):
        self.queue.put(task)

    def kill(self, task_id, reason):
        with self.lock:
            self.killed[task_id] = reason
            slot = self.running.get(task_id)
        if slot is not None:
            slot.kill()

    def report(self, task_id, state, result=None, error=None, ms=None):
        update = {"type": "StatusUpdate", "executorId": self.executor_id, "taskId": task_id,
                  "state": state}
        if state == "FINISHED":
            update["result"] = result
        if error is not None:
            update["error"] = {k: error[k] for k in ("name", "message", "stack", "fetchFailed")
                               if k in error}
        if ms is not None:
            update["durationMs"] = ms
        try:
            self.send(update)
        except RpcError as e:
            log("WARN", "Executor", "Could not report task %d %s: %s" % (task_id, state, e.message))

    def stop(self):
        with self.lock:
            self.stopping = True
        for _ in self.slots:
            self.queue.put(None)
        for slot in self.slots:
            slot.stop()


class ExecutorBackend(Endpoint):
    """The executor's endpoint: LaunchTask, KillTask, StopExecutor; watches driver and worker."""

    def __init__(self):
        self.runner = None
        self.driver = None  # the driver env's address
        self.worker = None  # the worker env's address, when watched
        self.exit_code = None
        self.exit_reason = None
        self.done = threading.Event()

    def exit(self, code, reason):
        if self.exit_code is None:
            self.exit_code, self.exit_reason = code, reason
        self.done.set()

    def receive(self, message, ctx):
        kind = message["type"]
        if kind in ("LaunchTask", "KillTask", "StopExecutor"):
            self.check_from_driver(kind, ctx)
        if kind == "LaunchTask":
            self.runner.launch(message["task"])
        elif kind == "KillTask":
            self.runner.kill(message["taskId"], message["reason"])
        elif kind == "StopExecutor":
            self.exit(0, "Driver commanded a shutdown")
        else:
            raise unsupported(message, ctx)

    def check_from_driver(self, kind, ctx):
        """Tasks come from the driver alone, over the connection this executor dialled to it (its
        worker, which also holds this application's key, may not send them)."""
        c = ctx.connection
        if not (c.outbound and c.peer == self.driver):
            raise Refused(kind, "only the driver %s may send it, over the connection this "
                          "executor dialled" % self.driver)

    def on_disconnected(self, address):
        if address == self.driver:
            self.exit(1, "Driver %s disassociated! Shutting down." % address)
        elif address == self.worker:
            self.exit(1, "Lost connection to worker %s. Exiting." % address)


def start(env, backend, args, driver, driver_name, worker, worker_name):
    """Watches the worker, then RetrieveAppConfig and RegisterExecutor; exits on failure."""
    if worker is not None:
        try:
            env.setup_endpoint_ref(worker, worker_name)
            log("INFO", "WorkerWatcher", "Connected to worker %s" % args.worker_url)
        except RpcError as e:
            backend.exit(1, "Cannot reach worker %s: %s" % (args.worker_url, e.message))
            return
    try:
        env.setup_endpoint_ref(driver, driver_name)
        config = env.ask(driver, driver_name, {"type": "RetrieveAppConfig"})
        if config["type"] != "AppConfig":
            raise RpcError(-32007, "expected AppConfig in reply to RetrieveAppConfig, got %s"
                           % config["type"])
        log_urls = {k: os.environ[v] for k, v in (("stdout", "WICK_LOG_URL_STDOUT"),
                                                  ("stderr", "WICK_LOG_URL_STDERR"))
                    if os.environ.get(v)}
        reply = env.ask(driver, driver_name, {
            "type": "RegisterExecutor", "executorId": args.executor_id,
            "executor": {"address": env.address, "name": "Executor"},
            "hostname": args.hostname, "cores": args.cores, "logUrls": log_urls})
    except RpcError as e:
        backend.exit(1, "Cannot register with driver: %s: %s" % (args.driver_url, e.message))
        return
    if reply["type"] != "RegisteredExecutor":
        backend.exit(1, "Executor registration failed: %s" % reply.get("message", reply["type"]))
    else:
        say("Registered with driver %s as executor %s of %s"
            % (args.driver_url, args.executor_id, config["appId"]))


def start_shuffle_server(args, credential, tls):
    """This executor's shuffle block server, on an env of its own that listens (the executor's
    own env only dials out), as Wick's executor has: on every interface, named by the executor's
    hostname, letting in only connections that prove this application's key (anyone, when the
    cluster runs open). Its files live in blockmgr-<executorId> under the application's local
    dir (the first of WICK_EXECUTOR_DIRS, else the working directory), which the worker removes
    when the application ends."""
    def app_key(kind, ident):
        return credential.key if (kind, ident) == ("app", args.app_id) else None

    env = RpcEnv("pyShuffle", host="0.0.0.0", port=0, credential=credential,
                 keys=app_key if credential is not None else None, trace=args.trace,
                 advertise_host=args.hostname, tls=tls)
    local = (os.environ.get("WICK_EXECUTOR_DIRS") or "").split(os.pathsep)[0] or os.getcwd()
    directory = os.path.join(local, "blockmgr-%s" % args.executor_id)
    env.setup_endpoint(SHUFFLE_ENDPOINT, ShuffleBlockServer(directory))
    log("INFO", "Executor", "Serving shuffle blocks of %s at %s" % (directory, env.address))
    return env, {"shuffleDir": directory, "shuffleLocation": env.address,
                 "executorId": args.executor_id}


def main(argv):
    parser = argparse.ArgumentParser(description="A Wick executor in Python (for pi_driver.py).")
    parser.add_argument("--driver-url", required=True, help="the driver endpoint's wick:// URI")
    parser.add_argument("--executor-id", required=True, help="this executor's id")
    parser.add_argument("--hostname", required=True, help="the host it runs on")
    parser.add_argument("--cores", required=True, type=int, help="tasks to run at once")
    parser.add_argument("--app-id", required=True, help="the application id")
    parser.add_argument("--worker-url", help="exit when this worker goes away")
    parser.add_argument("--trace", action="store_true", help="print every frame on stderr")
    parser.add_argument("--log-env-names", action="store_true",
                        help="log the names (not the values) of the environment variables")
    args = parser.parse_args(argv)
    if args.cores < 1:
        parser.error("--cores must be a whole number >= 1, got %d" % args.cores)
    try:
        driver, driver_name = parse_endpoint_uri(args.driver_url)
        worker, worker_name = parse_endpoint_uri(args.worker_url) if args.worker_url else (None, None)
    except ValueError as e:
        parser.error(str(e))

    if args.log_env_names:
        log("INFO", "Executor", "Environment variables: %s" % " ".join(sorted(os.environ)))
    try:
        credential = handed_credential()
    except ValueError as e:
        log("ERROR", "Executor", str(e))
        return 1
    if credential is not None and (credential.kind, credential.id) != ("app", args.app_id):
        log("ERROR", "Executor", "%s holds a %s key, but this executor belongs to app:%s: its "
            "worker hands each executor the key of its own application"
            % (APP_CREDENTIAL_ENV, credential.text(), args.app_id))
        return 1
    try:
        # As Wick's executor: the switches its driver handed down (WICK_SSL_*), the masters'
        # fingerprints its worker did (WICK_TLS_FINGERPRINT).
        tls = WireTls.from_conf({})
    except ValueError as e:
        log("ERROR", "Executor", str(e))
        return 1
    env = RpcEnv("pyExecutor", credential=credential, trace=args.trace, tls=tls)
    try:
        shuffle_env, place = start_shuffle_server(args, credential, tls)
    except (OSError, RuntimeError) as e:
        log("ERROR", "Executor", "Cannot listen for shuffle fetches: %s" % (e.strerror or e))
        env.stop()
        return 1
    backend = ExecutorBackend()
    backend.driver, backend.worker = driver, worker
    env.setup_endpoint("Executor", backend)
    signal.signal(signal.SIGTERM, lambda *_: backend.exit(143, "Received SIGTERM"))
    signal.signal(signal.SIGINT, lambda *_: backend.exit(130, "Received SIGINT"))
    auth = "%s key" % credential.text() if credential else "off"
    say("Python executor %s of %s (pid %d, %d core(s), authentication %s) connecting to driver %s"
        % (args.executor_id, args.app_id, os.getpid(), args.cores, auth, args.driver_url))

    # The task runner exists before registering: a LaunchTask may follow the reply at once.
    backend.runner = TaskRunner(args.executor_id, args.cores,
                                lambda update: env.send(driver, driver_name, update),
                                place, lambda source: fetch_blocks(env, source))
    start(env, backend, args, driver, driver_name, worker, worker_name)

    while not backend.done.wait(1.0):  # a timeout, so that signal handlers run promptly
        pass
    if backend.exit_code == 0:
        say(backend.exit_reason)
    else:
        log("ERROR", "Executor", backend.exit_reason)
    backend.runner.stop()
    shuffle_env.stop()
    env.stop()
    say("Exiting with status %d" % backend.exit_code)
    return backend.exit_code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
