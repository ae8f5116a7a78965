/**
 * Generates the protocol's JSON Schemas from the message registry, so that docs/ cannot drift
 * from the validators the RpcEnv runs: one file per message type (docs/protocol/messages/), one
 * per wire structure of the RPC layer (docs/protocol/wire/), one per structure that travels in a
 * field a message leaves open (docs/protocol/structures/: a MapStatus is a StatusUpdate's
 * `result`), an index.json listing them by boundary, and the message catalogue between the
 * markers in docs/protocol.md.
 *
 *   npm run schemas              writes all of it, and removes files it no longer generates
 *   npm run schemas -- --check   writes nothing; exits 1 listing stale, missing and extra files
 *
 * Output is deterministic (fixed key order, 2-space indent, trailing newline), so a rerun on an
 * unchanged registry changes nothing and the check test can compare bytes.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { wickProtocol } from '../backend/protocol/index.js';
import type { AnyMessageDef } from '../backend/protocol/registry.js';
import {
  AuthParams,
  EndpointRefData,
  Envelope,
  HelloParams,
  HelloResult,
} from '../backend/protocol/rpc.js';
import { MapStatus } from '../backend/protocol/shuffle.js';

/** The repository root: docs/protocol/ and docs/protocol.md are resolved against it. */
export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

const OUT_DIR = 'docs/protocol';
const DOC = 'docs/protocol.md';
export const CATALOGUE_BEGIN = '<!-- BEGIN GENERATED CATALOGUE: npm run schemas -->';
export const CATALOGUE_END = '<!-- END GENERATED CATALOGUE -->';
const JSON_SCHEMA_DIALECT = 'http://json-schema.org/draft-07/schema#';

interface WireSchema {
  name: string;
  doc: string;
  schema: TSchema;
}

/** The RPC layer's own structures: the handshake's params and results, the envelope, refs. */
const wireSchemas: WireSchema[] = [
  { name: 'HelloParams', doc: 'The params of the `wick.hello` request.', schema: HelloParams },
  { name: 'HelloResult', doc: 'The result of the `wick.hello` request.', schema: HelloResult },
  { name: 'AuthParams', doc: 'The params of the `wick.auth` request.', schema: AuthParams },
  { name: 'Envelope', doc: 'The params of every endpoint message.', schema: Envelope },
  {
    name: 'EndpointRefData',
    doc: 'A reference to an endpoint, as it travels inside messages.',
    schema: EndpointRefData,
  },
];

/**
 * Structures a message carries in a field its schema leaves open (any JSON value), which their
 * receiver checks itself against the same schema: a task's result is one per action, and a
 * ShuffleMapStage's is a MapStatus, which the driver keeps and hands to the reducers.
 */
const structureSchemas: WireSchema[] = [
  {
    name: 'MapStatus',
    doc: "The `result` of a ShuffleMapStage's task in its FINISHED `StatusUpdate` (Spark's MapStatus): where its map output is served and, per reducer, its block's size and CRC-32. The driver checks it against this schema and refuses one whose `sizes` or `crc32s` do not have one entry per reducer.",
    schema: MapStatus,
  },
];

export function protocolMessages(): AnyMessageDef[] {
  return wickProtocol.all();
}

const messageFile = (type: string) => `${OUT_DIR}/messages/${type}.schema.json`;
const wireFile = (name: string) => `${OUT_DIR}/wire/${name}.schema.json`;
const structureFile = (name: string) => `${OUT_DIR}/structures/${name}.schema.json`;

// ---- JSON Schema output ---------------------------------------------------------------------

const KEY_ORDER = [
  '$schema',
  '$id',
  'title',
  'description',
  'type',
  'const',
  'enum',
  'anyOf',
  'oneOf',
  'allOf',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'patternProperties',
  'required',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'contentEncoding',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'default',
];
/** Maps from names to schemas, whose key order is the declaration order of the code. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

function rank(key: string): number {
  const i = KEY_ORDER.indexOf(key);
  return i === -1 ? KEY_ORDER.length : i;
}

/** A plain-JSON copy with schema keywords in a fixed order (TypeBox's symbols are dropped). */
function canonical(value: unknown, keepOrder = false): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined);
  if (!keepOrder) keys.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = canonical(obj[k], !keepOrder && NAME_MAPS.has(k));
  return out;
}

function schemaDocument(schema: TSchema, id: string, title: string, description: string): string {
  const doc = canonical({
    ...JSON.parse(JSON.stringify(schema)),
    $schema: JSON_SCHEMA_DIALECT,
    $id: id,
    title,
    description,
  });
  return `${JSON.stringify(doc, null, 2)}\n`;
}

// ---- the catalogue in docs/protocol.md ------------------------------------------------------

type S = Record<string, unknown>;

const endpointRefShape = JSON.stringify(canonical(JSON.parse(JSON.stringify(EndpointRefData))));

function constants(s: S): unknown[] | undefined {
  if (s.const !== undefined) return [s.const];
  if (!Array.isArray(s.anyOf)) return undefined;
  const all: unknown[] = [];
  for (const option of s.anyOf as S[]) {
    const c = constants(option);
    if (!c) return undefined;
    all.push(...c);
  }
  return all;
}

function range(min: unknown, max: unknown, unit = ''): string {
  if (min !== undefined && max !== undefined) return `${min}–${max}${unit}`;
  if (min !== undefined) return `≥ ${min}${unit}`;
  if (max !== undefined) return `≤ ${max}${unit}`;
  return '';
}

/** A short, readable type for a table cell; the schema file has the full detail. */
function describeType(s: S, depth = 0): string {
  const consts = constants(s);
  if (consts) {
    const list = consts.map((c) => `\`${JSON.stringify(c)}\``);
    return list.length === 1 ? (list[0] as string) : `one of ${list.join(', ')}`;
  }
  if (Array.isArray(s.anyOf))
    return (s.anyOf as S[]).map((o) => describeType(o, depth)).join(' or ');
  switch (s.type) {
    case 'string': {
      const parts = ['string'];
      const len = range(s.minLength, s.maxLength, ' chars');
      if (len) parts.push(len);
      if (typeof s.pattern === 'string') parts.push(`matching \`${s.pattern}\``);
      if (typeof s.contentEncoding === 'string') parts.push(s.contentEncoding);
      return parts.join(', ');
    }
    case 'integer':
    case 'number': {
      const r = range(s.minimum, s.maximum);
      return r ? `${s.type} ${r}` : s.type;
    }
    case 'boolean':
    case 'null':
      return s.type;
    case 'array': {
      const items = describeType((s.items ?? {}) as S, depth + 1);
      const n = range(s.minItems, s.maxItems, ' items');
      return `array of ${items}${n ? ` (${n})` : ''}`;
    }
    case 'object': {
      if (JSON.stringify(canonical(s)) === endpointRefShape)
        return '[EndpointRefData](#endpoint-refs)';
      if (s.patternProperties) {
        const entries = Object.entries(s.patternProperties as Record<string, S>);
        const keys = entries.map(([k]) => `\`${k}\``).join(' or ');
        const values = entries.map(([, v]) => describeType(v, depth + 1)).join(' or ');
        const n = range(s.minProperties, s.maxProperties, ' entries');
        return `object of string matching ${keys} → ${values}${n ? ` (${n})` : ''}`;
      }
      const props = Object.keys((s.properties ?? {}) as S);
      if (depth > 1 || props.length === 0) return 'object';
      const required = new Set((s.required ?? []) as string[]);
      return `object {${props.map((p) => (required.has(p) ? p : `${p}?`)).join(', ')}}`;
    }
    default:
      return 'any JSON value';
  }
}

function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

function messageSection(def: AnyMessageDef): string {
  return [
    `#### ${def.type}`,
    '',
    `${cell(def.doc)} Schema: [${def.type}.schema.json](protocol/messages/${def.type}.schema.json)`,
    '',
    kindOf(def),
    '',
    fieldTable(def.schema),
  ].join('\n');
}

function structureSection(w: WireSchema): string {
  return [
    `#### ${w.name}`,
    '',
    `${cell(w.doc)} Schema: [${w.name}.schema.json](protocol/structures/${w.name}.schema.json)`,
    '',
    fieldTable(w.schema),
  ].join('\n');
}

function fieldTable(schema: TSchema): string {
  const s = JSON.parse(JSON.stringify(schema)) as S;
  const props = (s.properties ?? {}) as Record<string, S>;
  const required = new Set((s.required ?? []) as string[]);
  const lines = ['| Field | Type | Required | Description |', '|---|---|---|---|'];
  for (const [name, prop] of Object.entries(props)) {
    const about = name === 'type' ? 'The message type, equal to the JSON-RPC method.' : '';
    const description = typeof prop.description === 'string' ? prop.description : about;
    lines.push(
      `| \`${name}\` | ${cell(describeType(prop))} | ${required.has(name) ? 'yes' : 'no'} | ${cell(description)} |`,
    );
  }
  return lines.join('\n');
}

/** How a message travels: a JSON-RPC notification, a request and its replies, or a reply. */
function kindOf(def: AnyMessageDef): string {
  if (def.replies) {
    const replies = def.replies.map((r) => `[${r.type}](#${r.type.toLowerCase()})`).join(' or ');
    return `**Request** (a JSON-RPC request with an \`id\`), answered with ${replies}. ${roles(def)}`;
  }
  const requests = protocolMessages().filter((d) => d.replies?.includes(def));
  if (requests.length > 0) {
    const to = requests.map((r) => `[${r.type}](#${r.type.toLowerCase()})`).join(', ');
    return `**Reply** to ${to} (the \`result\` of its JSON-RPC response).`;
  }
  return `**One-way** (a JSON-RPC notification, without an \`id\`; no reply). ${roles(def)}`;
}

function roles(def: AnyMessageDef): string {
  return `Sent by: ${def.from.join(', ')}; handled by: ${def.to.join(', ')}.`;
}

/** The markdown between the catalogue markers: messages grouped by boundary. */
export function renderCatalogue(): string {
  const parts: string[] = [
    `_Generated by \`npm run schemas\` from \`backend/protocol/\`; do not edit by hand. No message admits fields beyond those listed (\`additionalProperties: false\`)._`,
  ];
  for (const [boundary, defs] of byBoundary(protocolMessages())) {
    parts.push(`### ${boundary}`);
    parts.push(defs.map((d) => `[${d.type}](protocol/messages/${d.type}.schema.json)`).join(' · '));
    for (const def of defs) parts.push(messageSection(def));
  }
  parts.push('### Structures inside messages');
  parts.push(
    'Values that travel in a message field whose schema is open (any JSON value), with a schema of their own (`docs/protocol/structures/`).',
  );
  for (const w of structureSchemas) parts.push(structureSection(w));
  return parts.join('\n\n');
}

function byBoundary(defs: AnyMessageDef[]): Map<string, AnyMessageDef[]> {
  const groups = new Map<string, AnyMessageDef[]>();
  for (const def of defs) {
    const list = groups.get(def.boundary) ?? [];
    list.push(def);
    groups.set(def.boundary, list);
  }
  return groups;
}

// ---- generate, check, write -----------------------------------------------------------------

/** Every file under docs/protocol/ this script owns, path (from the repo root) → content. */
export function renderSchemaFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const messages = protocolMessages();
  for (const def of messages) {
    files.set(messageFile(def.type), schemaDocument(def.schema, def.type, def.type, def.doc));
  }
  for (const w of wireSchemas) {
    files.set(wireFile(w.name), schemaDocument(w.schema, w.name, w.name, w.doc));
  }
  for (const w of structureSchemas) {
    files.set(structureFile(w.name), schemaDocument(w.schema, w.name, w.name, w.doc));
  }
  const index = {
    $comment: 'Generated by scripts/gen-schemas.ts (npm run schemas); do not edit.',
    wire: wireSchemas.map((w) => ({
      name: w.name,
      description: w.doc,
      file: path.posix.relative(OUT_DIR, wireFile(w.name)),
    })),
    structures: structureSchemas.map((w) => ({
      name: w.name,
      description: w.doc,
      file: path.posix.relative(OUT_DIR, structureFile(w.name)),
    })),
    boundaries: [...byBoundary(messages)].map(([boundary, defs]) => ({
      boundary,
      messages: defs.map((d) => ({
        type: d.type,
        description: d.doc,
        file: path.posix.relative(OUT_DIR, messageFile(d.type)),
      })),
    })),
  };
  files.set(`${OUT_DIR}/index.json`, `${JSON.stringify(index, null, 2)}\n`);
  return files;
}

export interface ProtocolDocsReport {
  /** Files whose content differs from what the registry generates. */
  stale: string[];
  /** Files the registry generates that do not exist. */
  missing: string[];
  /** Files under docs/protocol/ that the registry no longer generates. */
  extra: string[];
  /** Anything else in the way, such as docs/protocol.md without its catalogue markers. */
  problems: string[];
  ok: boolean;
}

/** What docs/protocol.md should read: the current file with its catalogue regenerated. */
function expectedDoc(root: string): { text?: string; problem?: string } {
  const file = path.join(root, DOC);
  if (!existsSync(file)) return { problem: `${DOC} does not exist` };
  const text = readFileSync(file, 'utf8');
  const begin = text.indexOf(CATALOGUE_BEGIN);
  const end = text.indexOf(CATALOGUE_END);
  if (begin === -1 || end === -1 || end < begin) {
    return {
      problem: `${DOC} needs the lines ${CATALOGUE_BEGIN} and ${CATALOGUE_END} around the catalogue`,
    };
  }
  const head = text.slice(0, begin + CATALOGUE_BEGIN.length);
  return { text: `${head}\n\n${renderCatalogue()}\n\n${text.slice(end)}` };
}

function listFiles(root: string, dir: string): string[] {
  const abs = path.join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    return e.isDirectory() ? listFiles(root, rel) : [rel];
  });
}

/** Compares docs/protocol/ and the catalogue in docs/protocol.md with the registry. */
export function checkProtocolDocs(root = repoRoot): ProtocolDocsReport {
  const expected = renderSchemaFiles();
  const report: ProtocolDocsReport = { stale: [], missing: [], extra: [], problems: [], ok: true };
  const doc = expectedDoc(root);
  if (doc.problem) report.problems.push(doc.problem);
  else if (readFileSync(path.join(root, DOC), 'utf8') !== doc.text) report.stale.push(DOC);
  for (const [rel, content] of expected) {
    const abs = path.join(root, rel);
    if (!existsSync(abs)) report.missing.push(rel);
    else if (readFileSync(abs, 'utf8') !== content) report.stale.push(rel);
  }
  report.extra = listFiles(root, OUT_DIR).filter((rel) => !expected.has(rel));
  for (const list of [report.stale, report.missing, report.extra]) list.sort();
  report.ok =
    report.stale.length + report.missing.length + report.extra.length + report.problems.length ===
    0;
  return report;
}

/** Brings docs/ up to date; returns what was out of date before. */
export function writeProtocolDocs(root = repoRoot): ProtocolDocsReport {
  const report = checkProtocolDocs(root);
  if (report.problems.length > 0) throw new Error(report.problems.join('\n'));
  const doc = expectedDoc(root);
  if (report.stale.includes(DOC)) writeFileSync(path.join(root, DOC), doc.text as string);
  for (const [rel, content] of renderSchemaFiles()) {
    if (!report.stale.includes(rel) && !report.missing.includes(rel)) continue;
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), content);
  }
  for (const rel of report.extra) rmSync(path.join(root, rel));
  removeEmptyDirs(path.join(root, OUT_DIR), false);
  return report;
}

function removeEmptyDirs(dir: string, removeSelf: boolean): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) removeEmptyDirs(path.join(dir, e.name), true);
  }
  if (removeSelf && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}

/** The report as lines for people, ending with what to do. */
export function formatReport(report: ProtocolDocsReport): string {
  if (report.ok) return 'docs/protocol is up to date.';
  const lines = ['docs/protocol is out of date with backend/protocol:'];
  for (const f of report.stale) lines.push(`  stale:   ${f}`);
  for (const f of report.missing) lines.push(`  missing: ${f}`);
  for (const f of report.extra) lines.push(`  extra:   ${f}`);
  for (const p of report.problems) lines.push(`  problem: ${p}`);
  lines.push('Run `npm run schemas` to regenerate it, and commit the result.');
  return lines.join('\n');
}

function main(argv: string[]): number {
  if (argv.includes('--check')) {
    const report = checkProtocolDocs();
    (report.ok ? process.stdout : process.stderr).write(`${formatReport(report)}\n`);
    return report.ok ? 0 : 1;
  }
  const report = writeProtocolDocs();
  const changed = report.stale.length + report.missing.length + report.extra.length;
  const total = renderSchemaFiles().size;
  process.stdout.write(
    changed === 0
      ? `docs/protocol is up to date (${total} files).\n`
      : `Updated docs/protocol: ${report.stale.length} changed, ${report.missing.length} added, ${report.extra.length} removed (${total} files).\n`,
  );
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  process.exitCode = main(process.argv.slice(2));
}
