import { type Static, Type } from '@sinclair/typebox';
import { boundary, defineMessage } from './registry.js';

/**
 * Files that travel with an application (Spark's file server in the driver's RpcEnv, from which
 * executors fetch jars and `--files`): an application's code and the files it adds are offered by
 * content, a SHA-256 each, and read in chunks by whoever needs them. A fetcher asks for the next
 * chunk when it has written the last, so a slow disk slows the server down instead of filling a
 * queue (back-pressure without a stream protocol), and a partial fetch is resumed by offset.
 */

export const Sha256 = Type.String({
  pattern: '^[0-9a-f]{64}$',
  maxLength: 64,
  description: 'A SHA-256, 64 lowercase hex digits',
});

/** A file's size, or an offset in one: up to 1 TiB. */
const FileBytes = Type.Integer({ minimum: 0, maximum: 2 ** 40 });

/** Relative, `/`-separated; a fetcher refuses `..`, `.` and empty segments (shippedPath.ts). */
export const ShippedPath = Type.String({
  minLength: 1,
  maxLength: 1024,
  description: 'A relative path with / separators, without . or .. segments',
});

export const ShippedFile = Type.Object(
  {
    path: ShippedPath,
    sha256: Sha256,
    size: FileBytes,
    executable: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ShippedFile = Static<typeof ShippedFile>;

/** The most files one set may hold: an application with its node_modules has thousands. */
export const MAX_SHIPPED_FILES = 100_000;

export const ShippedFiles = Type.Array(ShippedFile, { maxItems: MAX_SHIPPED_FILES });

/**
 * An application's code as executors run it: its modules, compiled one file per module (so that
 * a shipped function's free names are the names its module imported), with the npm packages they
 * use, under one root.
 */
export const AppCode = Type.Object(
  {
    entry: ShippedPath,
    files: ShippedFiles,
  },
  { additionalProperties: false },
);
export type AppCode = Static<typeof AppCode>;

/**
 * What a cluster-mode driver needs, kept as one file with the masters (its SHA-256 is all the
 * driver's description holds, so that a description stays small in ZooKeeper with any number of
 * files): the application's code tree and the files it ships.
 */
export const ShippedAppManifest = Type.Object(
  { code: AppCode, files: ShippedFiles },
  { additionalProperties: false },
);
export type ShippedAppManifest = Static<typeof ShippedAppManifest>;

export const FileRef = Type.Object(
  { sha256: Sha256, size: FileBytes },
  { additionalProperties: false },
);
export type FileRef = Static<typeof FileRef>;

/** The largest chunk one FetchFileChunk may ask for (its base64 is a third larger). */
export const MAX_FILE_CHUNK = 4 * 1024 * 1024;

const f2s = boundary(
  'File fetcher → File server',
  ['executor', 'worker', 'driver', 'client'],
  ['driver', 'master'],
);

export const FetchFileChunk = defineMessage(
  f2s,
  'FetchFileChunk',
  'Read up to `length` bytes at `offset` of a file the server offers, named by its SHA-256. A file the server does not offer is refused with FileNotOffered (-32020).',
  {
    sha256: Sha256,
    offset: FileBytes,
    length: Type.Integer({ minimum: 1, maximum: MAX_FILE_CHUNK }),
  },
  { reply: () => FileChunk },
);

export const FileChunk = defineMessage(
  f2s,
  'FileChunk',
  'The answer to FetchFileChunk: the bytes (fewer than asked at the end of the file), base64.',
  {
    data: Type.String({ contentEncoding: 'base64', maxLength: (MAX_FILE_CHUNK / 3) * 4 + 4 }),
    size: Type.Integer({ minimum: 0, maximum: 2 ** 40, description: "The whole file's size" }),
  },
);

// Client → Master: a cluster-mode submit leaves its application's files with the masters, which
// keep them (by content) for as long as a driver that needs them may be launched.

const c2m = boundary('Client → Master (files)', 'client', 'master');

export const RequestMissingFiles = defineMessage(
  c2m,
  'RequestMissingFiles',
  'Which of these files the master does not have yet (by SHA-256); refused when their sizes add up to more than wick.master.upload.maxSize.',
  { files: ShippedFiles },
  { reply: () => MissingFiles },
);

export const MissingFiles = defineMessage(
  c2m,
  'MissingFiles',
  'The answer to RequestMissingFiles: the SHA-256s to upload.',
  { sha256s: Type.Array(Sha256, { maxItems: MAX_SHIPPED_FILES }) },
);

export const UploadFileChunk = defineMessage(
  c2m,
  'UploadFileChunk',
  'Bytes of a file, in order from offset 0; the chunk that completes `size` bytes has the file checked against its SHA-256 and kept. An upload not continued where it stopped (offset ≠ bytes received) is refused.',
  {
    sha256: Sha256,
    size: FileBytes,
    offset: FileBytes,
    data: Type.String({ contentEncoding: 'base64', maxLength: (MAX_FILE_CHUNK / 3) * 4 + 4 }),
  },
  { reply: () => FileChunkStored },
);

export const FileChunkStored = defineMessage(
  c2m,
  'FileChunkStored',
  'The answer to UploadFileChunk: bytes received so far, and whether the file is complete.',
  {
    received: FileBytes,
    complete: Type.Boolean(),
  },
);
