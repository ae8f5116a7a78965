"""Shuffle files and blocks as Wick writes and serves them (docs/protocol.md, "Shuffles"; the
JavaScript side is backend/app/shuffle/blocks.ts, task/shuffleWrite.ts, executor/
ShuffleBlockServer.ts and fetchShuffleBlocks.ts), so that a Python reducer reads a map output
whichever executor wrote it.

- shuffle_<shuffleId>_<mapId>_0.data: the reducers' blocks one after another; a block is UTF-8
  text, one record per line (its JSON, then "\\n"), an empty block 0 bytes;
  shuffle_<shuffleId>_<mapId>_0.index: numPartitions + 1 unsigned 64-bit big-endian offsets.
- MapStatus {location, executorId, sizes, crc32s, records}: what the map task returns.
- FetchShuffleBlock {shuffleId, mapId, reduceId, offset, length <= 4 MiB} to the endpoint
  "ShuffleBlocks" -> ShuffleBlockChunk {data (base64), size}; a block the server lacks is
  refused with ShuffleBlockNotFound (-32021).
"""

import base64
import functools
import json
import os
import struct
import zlib
from concurrent.futures import ThreadPoolExecutor

from wick_rpc import Endpoint, RpcError, unsupported

SHUFFLE_ENDPOINT = "ShuffleBlocks"
SHUFFLE_BLOCK_NOT_FOUND = -32021
MAX_CHUNK = 4 * 1024 * 1024
CHUNK = 1024 * 1024  # what a reducer asks per FetchShuffleBlock, as Wick's executor does
PARALLEL = 8  # map outputs a reducer fetches at once (Spark's spark.reducer.maxReqsInFlight)


def shuffle_files(directory, shuffle_id, map_id):
    base = os.path.join(directory, "shuffle_%d_%d_0" % (shuffle_id, map_id))
    return base + ".data", base + ".index"


def record_line(record):
    """A record's line of a block. A string with a lone surrogate has no UTF-8: such a record is
    written with JSON's \\u escapes (which every reader decodes alike)."""
    text = json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, separators=(",", ":"), allow_nan=False).encode("ascii") + b"\n"


def write_map_output(directory, shuffle_id, map_id, buckets, location, executor_id, records):
    """Writes one map output (buckets: a list of record lines per reducer) and returns its
    MapStatus. The data file is renamed into place before the index: a server that finds the
    index finds its data complete."""
    os.makedirs(directory, exist_ok=True)
    data, index = shuffle_files(directory, shuffle_id, map_id)
    tmp = ".%d.tmp" % os.getpid()
    sizes, crc32s, offsets = [], [], [0]
    with open(data + tmp, "wb") as out:
        for lines in buckets:
            block = b"".join(lines)
            out.write(block)
            sizes.append(len(block))
            crc32s.append(zlib.crc32(block) & 0xFFFFFFFF)
            offsets.append(offsets[-1] + len(block))
    os.replace(data + tmp, data)
    with open(index + tmp, "wb") as out:
        out.write(struct.pack(">%dQ" % len(offsets), *offsets))
    os.replace(index + tmp, index)
    return {"location": location, "executorId": executor_id, "sizes": sizes, "crc32s": crc32s,
            "records": records}


def parse_block(block):
    """The records of one block; a block that does not end with a newline was cut short."""
    text = block.decode("utf-8")
    if text and not text.endswith("\n"):
        raise ValueError("A shuffle block ends inside a record (truncated)")
    return [json.loads(line) for line in text.split("\n") if line]


class ShuffleBlockServer(Endpoint):
    """Serves this executor's map outputs, a chunk per ask, from the files under `directory`
    alone (the ids are integers, so no ask names another file). Its env lets in only the
    application's key."""

    def __init__(self, directory):
        self.directory = directory

    def receive_and_reply(self, message, ctx):
        if message["type"] != "FetchShuffleBlock":
            raise unsupported(message, ctx)
        s, m, r = message["shuffleId"], message["mapId"], message["reduceId"]
        data, index = shuffle_files(self.directory, s, m)
        try:
            with open(index, "rb") as f:
                f.seek(8 * r)
                bounds = f.read(16)
        except OSError:
            bounds = b""
        if len(bounds) < 16:
            raise RpcError(SHUFFLE_BLOCK_NOT_FOUND, "No block shuffle_%d_%d_%d here: this "
                           "executor has no such map output" % (s, m, r))
        start, end = struct.unpack(">QQ", bounds)
        size = end - start
        length = max(0, min(message["length"], size - message["offset"]))
        with open(data, "rb") as f:
            f.seek(start + message["offset"])
            chunk = f.read(length)
        return {"type": "ShuffleBlockChunk", "data": base64.b64encode(chunk).decode("ascii"),
                "size": size}


class FetchFailed(Exception):
    """A block could not be read or did not match its MapStatus: the driver recomputes that map
    output. `fetch_failed` is the TaskError field the driver reads."""

    def __init__(self, message, shuffle_id, block):
        super().__init__(message)
        self.fetch_failed = {"shuffleId": shuffle_id, "mapId": block["mapId"],
                             "executorId": block["executorId"]}


def fetch_block(env, shuffle_id, reduce_id, b, chunk=CHUNK):
    """One reducer's block of one map output, chunk by chunk (the next asked when the last has
    come), checked against the size and CRC-32 its map task reported."""
    name = "shuffle_%d_%d_%d from executor %s (%s)" % (
        shuffle_id, b["mapId"], reduce_id, b["executorId"], b["location"])
    size = b["size"]
    if size == 0:
        return b""
    parts, got = [], 0
    try:
        while got < size:
            reply = env.ask(b["location"], SHUFFLE_ENDPOINT, {
                "type": "FetchShuffleBlock", "shuffleId": shuffle_id, "mapId": b["mapId"],
                "reduceId": reduce_id, "offset": got, "length": min(chunk, size - got)})
            data = base64.b64decode(reply["data"], validate=True)
            if reply["size"] != size or not data or got + len(data) > size:
                raise ValueError("its size is %d bytes on the server, %d expected"
                                 % (reply["size"], size))
            parts.append(data)
            got += len(data)
    except (RpcError, ValueError) as e:
        raise FetchFailed("Failed to fetch %s: %s" % (name, getattr(e, "message", None) or e),
                          shuffle_id, b)
    block = b"".join(parts)
    crc = zlib.crc32(block) & 0xFFFFFFFF
    if crc != b["crc32"]:
        raise FetchFailed("Block %s is corrupt: its CRC-32 is %d, %d expected"
                          % (name, crc, b["crc32"]), shuffle_id, b)
    return block


def fetch_blocks(env, source):
    """A reduce task's blocks (source: its 'shuffle' PartitionSource), in map order, up to
    PARALLEL map outputs at once (each chunk by chunk); the first that fails, in map order, is
    the FetchFailed raised."""
    refs = source["blocks"]
    fetch = functools.partial(fetch_block, env, source["shuffleId"], source["reduceId"])
    if len(refs) <= 1:
        return [fetch(b) for b in refs]
    with ThreadPoolExecutor(max_workers=min(PARALLEL, len(refs)),
                            thread_name_prefix="shuffle-fetch") as pool:
        return [f.result() for f in [pool.submit(fetch, b) for b in refs]]
