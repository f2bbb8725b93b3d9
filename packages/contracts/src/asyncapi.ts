import { bundleSchemas, readSchemaFiles, schemaUrl, type JsonObject, type SchemaFile } from './schemaFiles.ts';

/** A topic as the project creates it (packages/kafka topicPlan). */
export interface TopicSpec {
  topic: string;
  numPartitions: number;
  configs: Record<string, string>;
}

export interface AsyncApiOptions {
  /** PUBLIC_BASE_URL: the events' `dataschema` URLs and the served schemas. */
  publicBaseUrl: string;
  topics: { commands: TopicSpec; audit: TopicSpec; stockZero: TopicSpec; stockRestored: TopicSpec };
  /** The CloudEvents `source` of every event, and the data schema of each event type (packages/domain events.ts). */
  cloudEvents: { source: string; dataSchemas: Readonly<Record<string, string>> };
  /** KAFKA_BROKERS, shown as the server. */
  brokers?: string[];
  files?: SchemaFile[];
  version?: string;
}

const BINDING_VERSION = '0.5.0';
const SCHEMA_PREFIX = '#/components/schemas/';
const INTEGER_CONFIGS = new Set([
  'retention.ms',
  'retention.bytes',
  'delete.retention.ms',
  'max.message.bytes',
  'segment.bytes',
  'segment.ms',
]);

const AUDIT_TYPE = 'com.retail-ingestion.audit_record.v1';
const STOCK_ZERO_TYPE = 'com.retail-ingestion.inventory.stock_zero.v1';
const STOCK_RESTORED_TYPE = 'com.retail-ingestion.inventory.stock_restored.v1';
const OPERATOR_ACTION_TYPE = 'com.retail-ingestion.operator_action.v1';

/**
 * The AsyncAPI 3.0 document of every topic the service produces or consumes, generated
 * from schemas/commands/envelope.json and schemas/events/* (payloads) and from the topic plan
 * (partitions, retention). Events follow the CloudEvents 1.0 Kafka binding in binary mode (D18).
 */
export function buildAsyncApi(opts: AsyncApiOptions): JsonObject {
  const files = (opts.files ?? readSchemaFiles()).filter((f) => f.name.startsWith('events/') || f.name === 'commands/envelope.json');
  const { components: schemas, refOf } = bundleSchemas(files, SCHEMA_PREFIX);
  const s = (name: string): JsonObject => ({ $ref: refOf(name) });
  const dataSchemaOf = (type: string): string => {
    const file = opts.cloudEvents.dataSchemas[type];
    if (!file) throw new Error(`no data schema for event type ${type}`);
    return file;
  };

  const topicBinding = (t: TopicSpec): JsonObject => ({
    kafka: {
      topic: t.topic,
      partitions: t.numPartitions,
      topicConfiguration: topicConfiguration(t.configs),
      bindingVersion: BINDING_VERSION,
    },
  });
  const retentionOf = (t: TopicSpec): string => {
    const ms = t.configs['retention.ms'];
    if (ms === '-1') return 'kept for ever (`retention.ms` -1, never compacted): it is the source of truth for replays (D26)';
    if (ms) return `kept ${ms} ms (\`retention.ms\`)`;
    return "kept as long as the broker's default retention (`log.retention.*`; the project sets none)";
  };
  const shopKey = {
    kafka: {
      key: { type: 'string', description: 'The shop domain: every message of one shop goes to one partition, in order.' },
      bindingVersion: BINDING_VERSION,
    },
  };

  const ceHeaders = (type: string, subject: string): JsonObject => ({
    type: 'object',
    description: 'CloudEvents 1.0 Kafka binding, binary mode: the attributes are `ce_*` headers and the data is the JSON value.',
    required: ['ce_specversion', 'ce_id', 'ce_type', 'ce_source', 'ce_time', 'ce_dataschema', 'content-type'],
    properties: {
      ce_specversion: { const: '1.0' },
      ce_id: {
        type: 'string',
        format: 'uuid',
        description: 'The payload `event_id`: derived from (command_id, kind, key), the same on every delivery (D3, D5). Dedupe by it.',
      },
      ce_type: { const: type },
      ce_source: { const: opts.cloudEvents.source },
      ce_time: { type: 'string', format: 'date-time', description: 'The payload `occurred_at`.' },
      ce_subject: { type: 'string', description: subject },
      ce_actor: type.endsWith('.operator_action.v1')
        ? {
            type: 'string',
            pattern: '^(platform|key_[0-9a-f]{16}|cli:.+)$',
            description:
              'CloudEvents extension attribute `actor` (D28): who acted, the id of an API key with the `admin` scope, `platform` for the shared secret, or `cli:<user>` for the parked tool.',
          }
        : {
            type: 'string',
            pattern: '^(platform|key_[0-9a-f]{16})$',
            description:
              "CloudEvents extension attribute `actor` (D28): who sent the command behind the event, the id of the shop's API key or `platform` for the shared secrets (the command envelope `actor`). Absent only on events stored before D28.",
          },
      ce_traceparent: {
        type: 'string',
        pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$',
        description:
          "CloudEvents distributed-tracing extension: the W3C trace context of the command behind the event (the projector's apply span, a child of the retailer's request), so a subscriber continues that trace. Present when the request was traced.",
      },
      ce_tracestate: {
        type: 'string',
        description: 'CloudEvents distributed-tracing extension: the W3C `tracestate` beside `ce_traceparent`, when there is one.',
      },
      traceparent: {
        type: 'string',
        description: "The same as `ce_traceparent`, under the header name OpenTelemetry's Kafka instrumentations read.",
      },
      tracestate: { type: 'string', description: 'The same as `ce_tracestate`.' },
      ce_dataschema: {
        const: schemaUrl(opts.publicBaseUrl, dataSchemaOf(type)),
        description: 'The JSON Schema of the data, served by the gateway (PUBLIC_BASE_URL).',
      },
      'content-type': { const: 'application/json' },
    },
  });

  const eventMessage = (name: string, title: string, type: string, subject: string, summary: string): JsonObject => ({
    name,
    title,
    summary,
    contentType: 'application/json',
    headers: ceHeaders(type, subject),
    payload: s(dataSchemaOf(type)),
    correlationId: { description: 'The command that caused the event.', location: '$message.payload#/command_id' },
    bindings: shopKey,
  });

  const levelDescription =
    "Ordering: key = shop, so a shop's events on this topic are on one partition, in the order the projector committed them (one relay publishes at a time). `seq` counts the events of one (shop, product, location) level, 1, 2, 3, ... across both stock topics; the two topics are not ordered with each other, so a jump of more than one means an event of that level has not reached you yet, and a `seq` at or below the last one seen is a duplicate or older. Delivery: at least once (D5): after a crash an event may come again, with the same `event_id` / `ce_id`; never zero times.";

  const { commands, audit, stockZero, stockRestored } = opts.topics;
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Retail ingestion topics',
      version: opts.version ?? '0.1.0',
      description: [
        'The Kafka topics of the retail ingestion service. Every write of the HTTP API (' +
          `${opts.publicBaseUrl}/openapi.json` +
          ') is a command on the commands topic (D1); the projector applies each exactly once (D4) and publishes events through a transactional outbox (D5).',
        '',
        'Events are CloudEvents 1.0 in binary mode (D18): attributes in `ce_*` headers, JSON data, `ce_dataschema` naming a schema the gateway serves under ' +
          `${opts.publicBaseUrl}/schemas/` +
          ', the extension `ce_actor` naming who sent the command behind the event (D28), and the trace context of that command (`ce_traceparent`, CloudEvents distributed tracing) when its request was traced. Delivery is at least once with a stable `event_id` (= `ce_id`): consumers dedupe by it. Topic names are settings (COMMANDS_TOPIC, AUDIT_TOPIC, STOCK_ZERO_TOPIC, STOCK_RESTORED_TOPIC); the defaults are shown.',
      ].join('\n'),
      license: { name: 'Proprietary' },
    },
    defaultContentType: 'application/json',
    ...(opts.brokers?.length
      ? { servers: { kafka: { host: opts.brokers.join(','), protocol: 'kafka', description: 'KAFKA_BROKERS' } } }
      : {}),
    channels: {
      commands: {
        address: commands.topic,
        title: 'Command log',
        description: `Every accepted write, in the order the gateway appended it per shop (D2): key = shop. Commands are ${retentionOf(commands)}. A command may be appended twice (producer retry): the projector applies a command_id once (D4).`,
        messages: { command: { $ref: '#/components/messages/command' } },
        bindings: topicBinding(commands),
      },
      auditRecords: {
        address: audit.topic,
        title: 'Audit records',
        description: `One event per update-log record (products, inventory, order lines), keyed by shop, in log order per command (D5), and one per operator action on a parked command (retry, skip). Events are ${retentionOf(audit)}.`,
        messages: {
          auditRecord: { $ref: '#/components/messages/auditRecord' },
          operatorAction: { $ref: '#/components/messages/operatorAction' },
        },
        bindings: topicBinding(audit),
      },
      stockZero: {
        address: stockZero.topic,
        title: 'Stock zero',
        description: `A level's available_qty went from above 0 to 0 (D18). ${levelDescription} Events are ${retentionOf(stockZero)}.`,
        messages: { stockZero: { $ref: '#/components/messages/stockZero' } },
        bindings: topicBinding(stockZero),
      },
      stockRestored: {
        address: stockRestored.topic,
        title: 'Stock restored',
        description: `A level's available_qty went from 0 back above 0 (D18). ${levelDescription} Events are ${retentionOf(stockRestored)}.`,
        messages: { stockRestored: { $ref: '#/components/messages/stockRestored' } },
        bindings: topicBinding(stockRestored),
      },
    },
    operations: {
      appendCommand: {
        action: 'send',
        channel: { $ref: '#/channels/commands' },
        summary: 'The gateway (and the daily scheduler) append a command; acks from all in-sync replicas, idempotent producer.',
        messages: [{ $ref: '#/channels/commands/messages/command' }],
      },
      applyCommand: {
        action: 'receive',
        channel: { $ref: '#/channels/commands' },
        summary: 'The projector applies each command once, in order per shop, and commits its offset after the database transaction (D4).',
        messages: [{ $ref: '#/channels/commands/messages/command' }],
      },
      publishAuditRecord: {
        action: 'send',
        channel: { $ref: '#/channels/auditRecords' },
        summary: 'The outbox relay publishes each update-log record.',
        messages: [{ $ref: '#/channels/auditRecords/messages/auditRecord' }],
      },
      publishOperatorAction: {
        action: 'send',
        channel: { $ref: '#/channels/auditRecords' },
        summary: "The outbox relay publishes each operator action on a parked command, once the action's last transaction committed.",
        messages: [{ $ref: '#/channels/auditRecords/messages/operatorAction' }],
      },
      publishStockZero: {
        action: 'send',
        channel: { $ref: '#/channels/stockZero' },
        summary: 'The outbox relay publishes stock_zero.',
        messages: [{ $ref: '#/channels/stockZero/messages/stockZero' }],
      },
      publishStockRestored: {
        action: 'send',
        channel: { $ref: '#/channels/stockRestored' },
        summary: 'The outbox relay publishes stock_restored.',
        messages: [{ $ref: '#/channels/stockRestored/messages/stockRestored' }],
      },
    },
    components: {
      schemas,
      messages: {
        command: {
          name: 'command',
          title: 'Command envelope',
          summary: 'A write accepted by the gateway. `payload` is checked per `kind` against schemas/commands/<kind>.json.',
          contentType: 'application/json',
          headers: {
            type: 'object',
            required: ['command_id', 'kind'],
            properties: { command_id: { type: 'string', format: 'uuid' }, kind: { type: 'string', description: 'The envelope `kind`.' } },
          },
          payload: s('commands/envelope.json'),
          correlationId: { location: '$message.header#/command_id' },
          bindings: shopKey,
        },
        auditRecord: eventMessage(
          'auditRecord',
          'Audit record',
          AUDIT_TYPE,
          'The log table of the record.',
          'An update-log record, as stored.',
        ),
        operatorAction: eventMessage(
          'operatorAction',
          'Operator action',
          OPERATOR_ACTION_TYPE,
          'The parked command the operator named.',
          'An operator retried or skipped a parked command (CLI or operator API): who, why, and the commands applied.',
        ),
        stockZero: eventMessage(
          'stockZero',
          'stock_zero',
          STOCK_ZERO_TYPE,
          '`<product_id>/<location_id>`: the level.',
          'available_qty went from above 0 to 0.',
        ),
        stockRestored: eventMessage(
          'stockRestored',
          'stock_restored',
          STOCK_RESTORED_TYPE,
          '`<product_id>/<location_id>`: the level.',
          'available_qty went from 0 back above 0.',
        ),
      },
    },
  };
}

/** Kafka's topic configs as the binding types them: numbers as integers, cleanup.policy as a list. */
function topicConfiguration(configs: Record<string, string>): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(configs)) {
    if (k === 'cleanup.policy') out[k] = v.split(',').map((p) => p.trim());
    else if (INTEGER_CONFIGS.has(k)) out[k] = Number(v);
    else out[k] = v;
  }
  return out;
}
