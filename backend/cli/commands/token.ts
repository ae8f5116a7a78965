import type { Command } from 'commander';
import { withMaster } from '../../client/masterConnection.js';
import { loadConf } from '../../conf/load.js';
import { parseDurationMs } from '../../conf/parse.js';
import { CreateToken, ListTokens, RevokeToken } from '../../protocol/tokens.js';
import { addConfOptions, masterUrlOf } from '../options.js';

interface Flags {
  master?: string;
  conf: string[];
  propertiesFile?: string;
}

const masterOption = [
  '--master <url>',
  'master URL (default wick.master, $WICK_MASTER or wick://127.0.0.1:7077)',
] as const;

/**
 * `wick token create|list|revoke`: users' submit tokens, made by the master for whoever holds the
 * cluster secret (the operator). A token may submit, watch, kill and read the logs of its own
 * applications (or all, --all-apps), and nothing a worker or a master may do.
 */
export function registerToken(program: Command): void {
  const token = program
    .command('token')
    .description("Make, list and revoke users' submit tokens (run where the cluster secret is)");
  addConfOptions(
    token
      .command('create')
      .description("Make a user's submit token and print it (the master keeps only its hash)")
      .requiredOption('--name <name>', "who it is for: a user's name (letters, digits, . _ @ -)")
      .option('--ttl <duration>', 'how long it is valid: 30d, 12h, 90m… (default: until revoked)')
      .option('--all-apps', "it may also watch, kill and read the logs of others' applications")
      .option(...masterOption),
  ).action(async (flags: Flags & { name: string; ttl?: string; allApps?: boolean }) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    const ttlMs = flags.ttl === undefined ? undefined : parseTtl(flags.ttl);
    const reply = await withMaster(
      masterUrlOf(flags.master, conf),
      (master) =>
        master.ask(
          CreateToken({
            name: flags.name,
            allApps: flags.allApps === true,
            ...(ttlMs !== undefined ? { ttlMs } : {}),
          }),
        ),
      conf,
    );
    process.stdout.write(`${reply.token}\n`);
    const until =
      reply.entry.expiresAt === undefined
        ? 'until revoked'
        : `until ${new Date(reply.entry.expiresAt).toISOString()}`;
    process.stderr.write(
      `Token ${reply.entry.id} for ${reply.entry.name}, valid ${until}${reply.entry.allApps ? ', for every application' : ''}. ` +
        'It is shown this once: the user saves it, readable by them alone, in ~/.config/wick/token (or a file named by --token-file / WICK_TOKEN_FILE), e.g. `umask 077; cat > ~/.config/wick/token`.\n',
    );
  });
  addConfOptions(
    token
      .command('list')
      .description("List the users' tokens")
      .option(...masterOption),
  ).action(async (flags: Flags) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    const reply = await withMaster(
      masterUrlOf(flags.master, conf),
      (master) => master.ask(ListTokens({})),
      conf,
    );
    const rows = reply.tokens.map(
      (t) =>
        `${t.id}  ${t.name.padEnd(16)}  ${new Date(t.createdAt).toISOString()}  ${t.expiresAt === undefined ? 'never'.padEnd(24) : new Date(t.expiresAt).toISOString()}  ${t.allApps ? 'all apps' : 'own apps'}`,
    );
    process.stdout.write(
      `ID                    NAME              CREATED                   EXPIRES                   MAY TOUCH\n${rows.map((r) => `${r}\n`).join('')}`,
    );
  });
  addConfOptions(
    token
      .command('revoke')
      .description('Revoke a token by id, or every token of a name')
      .argument('<name|id>', 'a token id (tok-…) or a name')
      .option(...masterOption),
  ).action(async (nameOrId: string, flags: Flags) => {
    const conf = loadConf({ confPairs: flags.conf, propertiesFile: flags.propertiesFile });
    const reply = await withMaster(
      masterUrlOf(flags.master, conf),
      (master) => master.ask(RevokeToken({ nameOrId })),
      conf,
    );
    if (reply.revoked.length === 0) {
      throw new Error(`No token has the id or name "${nameOrId}" (wick token list shows them)`);
    }
    for (const t of reply.revoked) process.stdout.write(`Revoked ${t.id} (${t.name})\n`);
  });
}

function parseTtl(text: string): number {
  try {
    return parseDurationMs(text, 's');
  } catch (err) {
    throw new Error(`Invalid --ttl "${text}": ${(err as Error).message} (e.g. 30d, 12h, 90m)`);
  }
}
