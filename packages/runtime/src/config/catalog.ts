// Every setting of every process, in one place: its name, what it accepts, its
// default, which processes read it and what it means. Processes read settings only through
// `setting()` (settings.ts), validate them all at start (`checkSettings`), print them with `--help`,
// and the settings table of docs/operations.md is generated from this list (`npm run gen`; `npm test` fails on a
// stale table).
/* eslint-disable max-lines -- one table of every setting, read as one list by --help, the checks and the settings table */
import { duration, flag, integer, list, oneOf, someOf, text, timeZone, url, type Kind } from './kinds.ts';

/** The processes a setting is read by; `--help` of each shows its own. */
export const ROLES = ['gateway', 'projector', 'replay', 'tools', 'dev'] as const;
export type Role = (typeof ROLES)[number];

export const ROLE_TITLES: Record<Role, string> = {
  gateway: 'gateway',
  projector: 'projector (with its relay, daily scheduler and pruner)',
  replay: '`npm run replay` / `npm run verify`',
  tools: '`npm run topics`, `migrate`, `parked`, `keys`',
  dev: '`npm start` / `npm test` dev stack',
};

export const GROUPS = [
  'HTTP',
  'Admission',
  'Projector',
  'Retention',
  'PostgreSQL',
  'Kafka',
  'Kafka security',
  'Topics',
  'Observability',
  'Replay',
  'Dev stack',
] as const;
export type Group = (typeof GROUPS)[number];

export interface SettingDef<T> {
  kind: Kind<T>;
  /** The default as it would be written in the environment; undefined: unset (or computed, see defaultText). */
  default: string | undefined;
  /** How the default is shown when it is not a plain value (computed, or worth a gloss). */
  defaultText?: string;
  group: Group;
  roles: readonly Role[];
  /** Markdown, one or two sentences. */
  doc: string;
  /** Never echoed in an error or a dump. */
  secret?: boolean;
  /** May be given as NAME_FILE: a path whose content is the value (container secrets). */
  fromFile?: boolean;
  /** An empty value is a value (not "unset"): DB_ROLE= keeps the connecting user. */
  emptyIsValue?: boolean;
}

/** The shortest API_KEY_PEPPER accepted (D28: at least 128 bits when random). */
const MIN_PEPPER_CHARS = 32;

const APP: readonly Role[] = ['gateway', 'projector'];
const KAFKA_USERS: readonly Role[] = ['gateway', 'projector', 'replay', 'tools', 'dev'];
const DB_USERS: readonly Role[] = ['gateway', 'projector', 'replay', 'tools', 'dev'];

function def<T>(kind: Kind<T>, dflt: string, meta: Omit<SettingDef<T>, 'kind' | 'default'>): SettingDef<T> & { default: string };
function def<T>(kind: Kind<T>, dflt: undefined, meta: Omit<SettingDef<T>, 'kind' | 'default'>): SettingDef<T> & { default: undefined };
function def<T>(kind: Kind<T>, dflt: string | undefined, meta: Omit<SettingDef<T>, 'kind' | 'default'>): SettingDef<T> {
  return { kind, default: dflt, ...meta };
}

export const SETTINGS = {
  // HTTP
  INGEST_SECRET: def(list('comma-separated secrets'), undefined, {
    group: 'HTTP',
    roles: ['gateway'],
    secret: true,
    fromFile: true,
    doc: 'Accepted `x-ingest-secret` values, comma-separated so a secret can be rotated (D9). Unset: ingest endpoints answer 503.',
  }),
  CRON_SECRET: def(list('comma-separated secrets'), undefined, {
    group: 'HTTP',
    roles: ['gateway'],
    secret: true,
    fromFile: true,
    doc: 'Accepted `x-cron-secret` values for `/api/products/bulk-upsert`, comma-separated. Unset: that endpoint answers 503.',
  }),
  API_KEY_PEPPER: def(text(`at least ${MIN_PEPPER_CHARS} characters`, MIN_PEPPER_CHARS), undefined, {
    group: 'HTTP',
    roles: ['gateway', 'tools'],
    secret: true,
    fromFile: true,
    doc: "The server-side key of the per-shop API keys' stored hashes (D28: HMAC-SHA-256; random, kept out of the database). Changing it invalidates every key. Unset: keys cannot be minted or used (`/api/admin/keys` answers 503, a `Bearer` key 401).",
  }),
  PLATFORM_SECRETS_FOR_RETAILERS: def(oneOf(['on', 'off'] as const), 'on', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: '`off`: the shared secrets (`x-ingest-secret`, `x-cron-secret`) are refused on the retailer endpoints, which then take per-shop keys only (D28); they keep working on the platform-only ones (daily snapshot, keys, operator API). For when every retailer has its own key.',
  }),
  PORT: def(integer(0, 65535), '8080', { group: 'HTTP', roles: ['gateway'], doc: 'Gateway port (`0` = any free port).' }),
  HOST: def(text('a bind address'), '0.0.0.0', { group: 'HTTP', roles: ['gateway'], doc: 'Gateway bind address.' }),
  SHUTDOWN_LINGER: def(duration(0), '2s', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: "How long a stopping gateway keeps its clients' idle keep-alive connections open, answering each request that still arrives on one with `Connection: close`, before it closes those still idle. Behind a Service (kube-proxy), connections made before the pod left the endpoints still lead to it; closing an idle one at the moment a client sends on it resets that request. `0`: closed at once.",
  }),
  METRICS_PORT: def(integer(0, 65535), undefined, {
    group: 'HTTP',
    roles: ['gateway'],
    defaultText: 'unset: `/metrics` is served on `PORT` beside the API',
    doc: "Serves the gateway's `/metrics` on a listener of its own on this port (bound to `HOST`), and no longer on `PORT`: the public API port then carries no operational data, and a NetworkPolicy can open the two to different peers (the Kubernetes manifests set `9090`). `/healthz` and `/readyz` stay on `PORT`.",
  }),
  PUBLIC_BASE_URL: def(url(['http', 'https']), undefined, {
    group: 'HTTP',
    roles: APP,
    defaultText: '`http://<HOST>:<PORT>` (`0.0.0.0` reads as `127.0.0.1`; the gateway uses the port it bound)',
    doc: "The address clients reach the gateway at, without a trailing slash (e.g. `https://ingest.example.com`). The served JSON Schemas' `$id`s, the `servers` of `/openapi.json` and the `ce_dataschema` of every event name URLs under it (see [API contracts](api.md#api-contracts)). Set it on the gateway **and** the projector (the relay writes `ce_dataschema`): the default only suits one machine.",
  }),
  REPLY_TIMEOUT_MS: def(integer(1), '15000', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: 'How long a request waits for its projector result (milliseconds) before answering 202 (D6).',
  }),
  BODY_LIMIT_BYTES: def(integer(1024), '33554432', {
    group: 'HTTP',
    roles: ['gateway'],
    defaultText: '`33554432` (32 MiB)',
    doc: 'Largest request body (at most a quarter of `MAX_INFLIGHT_BYTES`, see [Admission](api.md#admission)); more → 413.',
  }),
  BODY_TIMEOUT: def(duration(100), '60s', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: 'How long a request body may take to arrive once its request is admitted; a slower one is cut with 408 and its connection closed.',
  }),
  DRY_RUN_STATEMENT_TIMEOUT: def(duration(100), '10s', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: "Bound of each statement of a [dry run](api.md#dry-run-dry_runtrue-d22), the wait for the shop's lock included; past it the dry run answers 503 with `Retry-After`.",
  }),
  POSITION_CACHE: def(duration(0), '1s', {
    group: 'HTTP',
    roles: ['gateway'],
    doc: "How long a gateway reuses the command log's end offsets for the `position` of pending commands (`GET /api/commands/{id}`). `0ms` reads them on every request.",
  }),
  BUSINESS_TIMEZONE: def(timeZone(), 'Asia/Tokyo', {
    group: 'HTTP',
    roles: APP,
    doc: 'IANA zone of the business day (D16): the gateway dates snapshot rows and defaults `/api/admin/daily-snapshot` with it, the scheduler uses it to find the day that just ended.',
  }),

  // Admission
  MAX_INFLIGHT_BYTES: def(integer(1024), '536870912', {
    group: 'Admission',
    roles: ['gateway'],
    defaultText: '`536870912` (512 MiB)',
    doc: 'Body bytes received by requests in flight in one gateway (not what they declare) before it answers 429 (D13); one connection holds at most a quarter of it.',
  }),
  MAX_CONSUMER_LAG: def(integer(1), '100000', {
    group: 'Admission',
    roles: ['gateway'],
    doc: "Commands appended but not yet committed by the projector's consumer group, polled every 2 s, above which the gateway answers 429 (D13).",
  }),
  SHOP_MAX_INFLIGHT_BYTES: def(integer(1024), '268435456', {
    group: 'Admission',
    roles: ['gateway'],
    defaultText: '`268435456` (256 MiB: half of `MAX_INFLIGHT_BYTES`)',
    doc: "Body bytes one shop's admitted requests may hold at once in one gateway, counted from the parsed body until the answer ([Fair admission per shop](api.md#fair-admission-per-shop)); a shop that holds nothing is always admitted.",
  }),
  SHOP_MAX_INFLIGHT_REQUESTS: def(integer(1), '256', {
    group: 'Admission',
    roles: ['gateway'],
    doc: 'Requests of one shop admitted and not yet answered, per gateway.',
  }),
  SHOP_RATE_LINES_PER_S: def(integer(0), '0', {
    group: 'Admission',
    roles: ['gateway'],
    defaultText: '`0` (off)',
    doc: "Lines (products, inventory lines, order rows: the body's largest array; 1 for other bodies) per second one shop may send, across every gateway (one bucket per shop in PostgreSQL, leased by the gateways about a second at a time), refilled continuously: a quota per shop. Off by default, so that one shop alone is never refused below the pipeline's capacity; bench B7 measures it at 10% of capacity.",
  }),
  SHOP_BURST_LINES: def(integer(1), '50000', {
    group: 'Admission',
    roles: ['gateway'],
    doc: 'Size of that token bucket: lines a shop gathers while idle. A shop is admitted while its bucket is not empty; a body with more lines than are left takes the bucket into debt, paid back at `SHOP_RATE_LINES_PER_S`.',
  }),

  // Projector
  PROJECTOR_ROLES: def(someOf(['apply', 'relay', 'scheduler', 'pruner'] as const), 'apply,relay,scheduler,pruner', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'What a projector process runs: `apply` (consume the command log, update the read model), `relay` (publish the outbox; one leader at a time), `scheduler` (daily snapshots), `pruner` (retention, and table upkeep where autovacuum does not run: `DB_UPKEEP`). Every process may run them all (the relay and the pruner elect one process); a deployment may run `relay,scheduler,pruner` apart from scaled `apply` processes (see [Deploying](#deploying)).',
  }),
  PROJECTOR_GROUP_ID: def(text('a consumer group id'), 'ingest-projector', {
    group: 'Projector',
    roles: APP,
    doc: 'Projector consumer group. The gateway reads it too, to measure the backlog. A new group reads the log from the beginning, and the applied position stored with every command makes that harmless.',
  }),
  PROJECTOR_CONCURRENCY: def(integer(1), '3', {
    group: 'Projector',
    roles: ['projector'],
    doc: "Partitions the projector applies at the same time: that many independent members of its consumer group, each applying its partitions one batch at a time. A busy partition delays only the other partitions of its own member (a member fetches its partitions together); with as many members as partitions, none. Members beyond the topic's partitions stand idle.",
  }),
  PROJECTOR_MAX_ATTEMPTS: def(integer(1), '3', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'Tries of a command that fails for a reason retrying will not fix, before it is parked. Transient failures (database unreachable, deadlock) are retried for as long as they last and never count here.',
  }),
  PROJECTOR_RETRY_BACKOFF: def(duration(1), '100ms', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'First wait between tries (×4 per failed try; transient failures: ×2, at most 5 s).',
  }),
  PROJECTOR_GROUP_COMMANDS: def(integer(1), '64', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'Group commit: consecutive commands of one partition the projector may apply in one transaction (each with its own claim, position, result and outbox rows; replies go out on commit). `1` applies one command per transaction.',
  }),
  PROJECTOR_GROUP_BYTES: def(integer(1024), '8388608', {
    group: 'Projector',
    roles: ['projector'],
    defaultText: '`8388608` (8 MiB)',
    doc: 'Group commit: most message bytes in one transaction.',
  }),
  KAFKA_SESSION_TIMEOUT: def(duration(6000), '10s', {
    group: 'Projector',
    roles: ['projector'],
    doc: "Consumer group session timeout: how long a killed projector's partitions stay with it before the group hands them to the others (the broker's minimum is 6 s).",
  }),
  KAFKA_HEARTBEAT_INTERVAL: def(duration(100), '1s', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'Consumer heartbeat; heartbeats continue while a long command or a retry runs.',
  }),
  PROJECTOR_FETCH_WAIT: def(duration(10), '1s', {
    group: 'Projector',
    roles: ['projector'],
    doc: "Longest a fetch waits on the broker for new commands. A member joins a rebalance, and stops, only once its fetch returns, so this bounds the pause when a projector joins or leaves (kafkajs' own 5 s made a leave stall replies 4.6 s in bench B8); an idle projector fetches once per wait per broker.",
  }),
  RELAY_FENCE: def(duration(0), '15s', {
    group: 'Projector',
    roles: ['projector'],
    doc: "How long a relay that takes the lead over waits after the previous leader's last lease renewal before it publishes (longer than one publish can take). A graceful stop hands over at once.",
  }),
  DAILY_SNAPSHOT_CHECK_MS: def(integer(1000), '60000', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'How often (milliseconds) the daily scheduler checks for a finished business day without a daily snapshot (D16).',
  }),
  BUSINESS_DAY_LENGTH: def(duration(10_000), '24h', {
    group: 'Projector',
    roles: ['projector'],
    doc: "The daily scheduler's business day (D16). `24h`: the calendar day of `BUSINESS_TIMEZONE`. Shorter, for soak and demo runs only (`npm run soak` sets `2m`): from the process's start its scheduler's calendar runs that much faster, so the daily job fires every `BUSINESS_DAY_LENGTH` with the dates that follow today's; set `DAILY_SNAPSHOT_CHECK_MS` well below it. Never in production: the dates run ahead of the real ones.",
  }),
  PROJECTOR_METRICS_PORT: def(integer(0, 65535), '9091', {
    group: 'Projector',
    roles: ['projector'],
    doc: 'Port of `/metrics`, `/healthz` and `/readyz` of a projector run on its own (`services/projector/src/main.ts`). Not used by `npm start`, whose gateway `/metrics` shows everything.',
  }),
  FAILPOINTS: def(text('name=exit|error|sleep(ms)[@N], comma-separated'), undefined, {
    group: 'Projector',
    roles: APP,
    doc: 'Test only: crash points, e.g. `projector.after-commit-before-ack=exit@3` (see [Faults](#faults-and-outages)).',
  }),

  // Retention
  RESULT_RETENTION: def(duration(1000), '7d', {
    group: 'Retention',
    roles: APP,
    doc: 'How long stored results, request rows and resolved parked commands are kept. `GET /api/commands/{id}` answers `410 expired` for a pruned command.',
  }),
  MARKER_RETENTION: def(duration(1000), '7d', {
    group: 'Retention',
    roles: ['projector'],
    doc: 'How long per-command processed markers are kept (they catch a command appended twice by a producer retry; the applied position per partition does the rest).',
  }),
  IDEMPOTENCY_KEY_TTL: def(duration(1000), '24h', {
    group: 'Retention',
    roles: APP,
    doc: 'How long the answer to a request sent with an `Idempotency-Key` header is kept for its retries (see [Idempotency-Key](api.md#idempotency-key-header)); older keys are pruned by the projector and are free again. Keep it at most `RESULT_RETENTION`.',
  }),
  PRUNE_INTERVAL: def(duration(100), '1m', {
    group: 'Retention',
    roles: ['projector'],
    doc: 'How often the projector prunes `agent_runtime` (one process at a time, 5,000 rows per statement).',
  }),

  // PostgreSQL
  DATABASE_URL: def(url(['postgres', 'postgresql']), 'postgres://postgres@127.0.0.1:5432/ingest', {
    group: 'PostgreSQL',
    roles: DB_USERS,
    secret: true,
    fromFile: true,
    doc: 'PostgreSQL connection; the database is created if missing by `npm start` and `npm run migrate`.',
  }),
  DB_ROLE: def(text('a role name, or empty'), 'ingest_service', {
    group: 'PostgreSQL',
    roles: DB_USERS,
    emptyIsValue: true,
    doc: 'Role the services switch to on connect (`-c role=…`, D25). Set it to an empty value to keep the connecting user.',
  }),
  DB_UPKEEP: def(oneOf(['auto', 'always', 'off'] as const), 'auto', {
    group: 'PostgreSQL',
    roles: ['projector', 'replay'],
    doc: "Vacuum and analyze the service's tables by autovacuum's thresholds: `auto` only where PostgreSQL's autovacuum does not (the server runs with `autovacuum = off`, or a table opts out), `always` whatever autovacuum does, `off` never. Done by the projector that prunes (one process at a time) and by `npm run replay` for its target, as `DATABASE_URL`'s user (VACUUM and ANALYZE need the tables' owner; see [Table upkeep](#table-upkeep)). In every mode, `off` included, the same rounds create the update logs' coming monthly partitions ([Update log partitions](#update-log-partitions)).",
  }),
  DB_UPKEEP_INTERVAL: def(duration(100), '10s', {
    group: 'PostgreSQL',
    roles: ['projector', 'replay'],
    doc: "How often the upkeep reads the table statistics to decide (one query; the VACUUM or ANALYZE only when due) and checks that the update logs' coming months have their partitions (one query). A table waits `autovacuum_naptime` (the server's, 1 min by default) after its last VACUUM / ANALYZE, as under autovacuum, unless it has more than doubled since (a fresh table filling).",
  }),

  // Kafka
  KAFKA_BROKERS: def(list('comma-separated host:port'), '127.0.0.1:9092', {
    group: 'Kafka',
    roles: KAFKA_USERS,
    doc: 'Comma-separated bootstrap brokers. When set, `npm start` uses it and starts no broker.',
  }),
  COMMANDS_TOPIC: def(text('a topic name'), 'ingest.commands.v1', { group: 'Kafka', roles: KAFKA_USERS, doc: 'The command log.' }),
  AUDIT_TOPIC: def(text('a topic name'), 'ingest.audit.v1', {
    group: 'Kafka',
    roles: KAFKA_USERS,
    doc: 'Audit events from the outbox.',
  }),
  STOCK_ZERO_TOPIC: def(text('a topic name'), 'inventory.stock-zero.v1', {
    group: 'Kafka',
    roles: KAFKA_USERS,
    doc: '`stock_zero` events from the outbox (D18).',
  }),
  STOCK_RESTORED_TOPIC: def(text('a topic name'), 'inventory.stock-restored.v1', {
    group: 'Kafka',
    roles: KAFKA_USERS,
    doc: '`stock_restored` events from the outbox (D18).',
  }),

  // Topics
  KAFKA_PARTITIONS: def(integer(1), '6', {
    group: 'Topics',
    roles: KAFKA_USERS,
    doc: 'Partitions for topics that `npm start` creates (existing topics are left as they are; `npm run topics -- --apply` adds partitions, never removes them).',
  }),
  KAFKA_REPLICATION_FACTOR: def(integer(1), undefined, {
    group: 'Topics',
    roles: KAFKA_USERS,
    defaultText: '`3` with `KAFKA_BROKERS` set, else `1`',
    doc: "Replication factor of the topics in the plan (`npm start`, `npm run topics`). Unset `KAFKA_BROKERS` means the dev stack's own single broker, hence 1. The default is lowered, with a logged note, on a cluster with fewer brokers; a value you set is kept, and a cluster too small for it stops the start with a clear error.",
  }),
  KAFKA_MIN_INSYNC_REPLICAS: def(integer(1), undefined, {
    group: 'Topics',
    roles: KAFKA_USERS,
    defaultText: '`2` with `KAFKA_BROKERS` set, else `1` (never above the replication factor)',
    doc: '`min.insync.replicas` of every topic: copies an `acks=all` write needs. Above `KAFKA_REPLICATION_FACTOR` stops the start.',
  }),

  // Kafka security
  KAFKA_SSL: def(flag(), 'false', {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: '`true`: every Kafka client (gateway, projector, relay, replay, topics, bench, fault suite) connects with TLS; the broker certificate is always checked. See [Kafka in production](#kafka-in-production).',
  }),
  KAFKA_SSL_CA_FILE: def(text('a path'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: "PEM CA bundle the broker certificate must chain to; unset = the system's CAs.",
  }),
  KAFKA_SSL_CERT_FILE: def(text('a path'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: 'mTLS: client certificate (PEM); with `KAFKA_SSL_KEY_FILE`, both or neither.',
  }),
  KAFKA_SSL_KEY_FILE: def(text('a path'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: "mTLS: the client certificate's private key (PEM, PKCS#8 or PKCS#1).",
  }),
  KAFKA_SSL_KEY_PASSWORD: def(text('a passphrase'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    secret: true,
    fromFile: true,
    doc: 'Passphrase of an encrypted `KAFKA_SSL_KEY_FILE`.',
  }),
  KAFKA_SSL_SERVERNAME: def(text('a host name'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: 'Name the broker certificate must carry (and SNI), when it differs from the host in `KAFKA_BROKERS`.',
  }),
  KAFKA_SASL_MECHANISM: def(oneOf(['plain', 'scram-sha-256', 'scram-sha-512'] as const), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    doc: 'SASL mechanism. `plain` needs `KAFKA_SSL=true`.',
  }),
  KAFKA_SASL_USERNAME: def(text('a user name'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    fromFile: true,
    doc: 'SASL user; required with a mechanism.',
  }),
  KAFKA_SASL_PASSWORD: def(text('a password'), undefined, {
    group: 'Kafka security',
    roles: KAFKA_USERS,
    secret: true,
    fromFile: true,
    doc: 'SASL password; required with a mechanism. Never logged.',
  }),

  // Observability
  LOG_LEVEL: def(oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const), 'info', {
    group: 'Observability',
    roles: KAFKA_USERS,
    doc: 'pino level.',
  }),
  LOG_FORMAT: def(oneOf(['json', 'pretty'] as const), undefined, {
    group: 'Observability',
    roles: KAFKA_USERS,
    doc: 'Unset: pretty (pino-pretty) when stdout is a terminal and `NODE_ENV` is not `production`, JSON lines otherwise. See [Tracing and logs](#tracing-and-logs).',
  }),
  NODE_ENV: def(text('an environment name'), undefined, {
    group: 'Observability',
    roles: KAFKA_USERS,
    doc: '`production` keeps JSON log lines even on a terminal (see `LOG_FORMAT`).',
  }),
  OTEL_TRACES_EXPORTER: def(oneOf(['otlp', 'console', 'none'] as const), undefined, {
    group: 'Observability',
    roles: APP,
    defaultText: 'unset (off)',
    doc: '`otlp` or `console` turns tracing on ([Tracing and logs](#tracing-and-logs)); unset or `none`: off, and no OpenTelemetry SDK module is loaded.',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: def(url(['http', 'https']), undefined, {
    group: 'Observability',
    roles: APP,
    defaultText: '`http://localhost:4318`',
    doc: 'OTLP/HTTP collector; spans go to `<endpoint>/v1/traces` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` gives the full URL instead).',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: def(url(['http', 'https']), undefined, {
    group: 'Observability',
    roles: APP,
    doc: 'The full URL spans are posted to.',
  }),
  OTEL_SERVICE_NAME: def(text('a service name'), undefined, {
    group: 'Observability',
    roles: APP,
    defaultText: '`ingest` (`npm start`), `ingest-gateway`, `ingest-projector`',
    doc: '`service.name` of the spans.',
  }),
  OTEL_SDK_DISABLED: def(flag(), 'false', {
    group: 'Observability',
    roles: APP,
    doc: '`true` turns tracing off whatever `OTEL_TRACES_EXPORTER` says.',
  }),

  // Replay
  REPLAY_DATABASE_URL: def(url(['postgres', 'postgresql']), undefined, {
    group: 'Replay',
    roles: ['replay'],
    secret: true,
    defaultText: '`DATABASE_URL` with `_replay` after the database name',
    doc: 'The scratch database of `npm run replay` and `npm run verify` ([Replay](replay.md)).',
  }),
  REPLAY_CONCURRENCY: def(integer(1), '3', { group: 'Replay', roles: ['replay'], doc: 'Partitions replayed side by side.' }),
  REPLAY_BATCH: def(integer(1), '500', {
    group: 'Replay',
    roles: ['replay'],
    doc: 'Commands per replay transaction (their claims in one statement; a batch with a command that fails for good runs again with a savepoint per command).',
  }),
  REPLAY_BUSY_PERCENT: def(integer(0, 100), '0', {
    group: 'Replay',
    roles: ['replay'],
    defaultText: '`0` (25 in place, 100 into scratch)',
    doc: "Share of each replayed partition's time spent applying, in percent: after a batch that took t it rests t·(100/p − 1), leaving the database's cores to the live service ([Replay](replay.md#rebuilding-under-live-load)). The swap's catch-up always runs flat out.",
  }),
  REPLAY_METRICS_PORT: def(integer(0, 65535), '0', {
    group: 'Replay',
    roles: ['replay'],
    defaultText: '`0` (off)',
    doc: "Serves the replay's progress on `/metrics` while it runs.",
  }),

  // Dev stack
  KAFKA_PROVIDER: def(oneOf(['local', 'testcontainers'] as const), 'local', {
    group: 'Dev stack',
    roles: ['dev'],
    doc: '`testcontainers`: when no `KAFKA_BROKERS` is set and nothing answers on 127.0.0.1:9092, start a KRaft broker in a container (needs Docker or Podman) instead of the local Java broker.',
  }),
  KAFKA_CLUSTER_SIZE: def(integer(1, 5), '1', {
    group: 'Dev stack',
    roles: ['dev'],
    doc: '`3`: when no `KAFKA_BROKERS` is set, `npm start` and the test setup run a local KRaft cluster of that many nodes (ports 9092, 9192, 9292; data in `.data/kafka-cluster/`) instead of one broker, and topics default to replication 3 and `min.insync.replicas` 2. A Kafka already on 127.0.0.1:9092 is reused only if it has that many brokers.',
  }),
  KAFKA_VERSION: def(oneOf(['3.9.2', '4.4.0'] as const), '3.9.2', {
    group: 'Dev stack',
    roles: ['dev'],
    doc: 'Apache Kafka version of the broker or cluster the dev stack starts itself (jars from Maven Central into `deploy/kafka/libs/<version>/`, data per version). Both are tested (docs/testing.md); a Kafka already running is reused whatever its version.',
  }),
  KAFKA_JARS_CACHE: def(text('a folder, or off'), undefined, {
    group: 'Dev stack',
    roles: ['dev'],
    doc: 'Where the Kafka jars resolved once are kept for every checkout of this user (default `~/.cache/retail-ingest/kafka-libs`): a fresh clone copies them instead of starting Maven. `off`: always Maven.',
  }),
  KAFKA_TESTCONTAINERS_IMAGE: def(text('an image'), 'confluentinc/cp-kafka:7.9.1', {
    group: 'Dev stack',
    roles: ['dev'],
    doc: 'Image for `KAFKA_PROVIDER=testcontainers`.',
  }),
  JAVA_HOME: def(text('a path'), undefined, {
    group: 'Dev stack',
    roles: ['dev'],
    doc: 'Java for the local broker (`$JAVA_HOME/bin/java`, else `java` on `PATH`).',
  }),
  CI: def(text('any value'), undefined, {
    group: 'Dev stack',
    roles: ['dev'],
    doc: 'When set, `bootstrap.mjs` installs with `pnpm install --frozen-lockfile`.',
  }),
} as const satisfies Record<string, SettingDef<unknown>>;

export type SettingName = keyof typeof SETTINGS;
