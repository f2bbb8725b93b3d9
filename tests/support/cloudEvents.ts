import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Kafka, type CloudEvent, type KafkaMessage } from 'cloudevents';
import { expect } from 'vitest';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A test's PUBLIC_BASE_URL: not reachable, so every schema is fetched from the pipeline's own gateway. */
export const TEST_PUBLIC_BASE_URL = 'http://ingest.test.invalid';

/**
 * Reads a consumed message with the CloudEvents SDK (Kafka binding, binary mode), checks
 * the event by the CloudEvents spec, then fetches the schema its `dataschema` names from the gateway
 * (`GET /schemas/...`) and validates the data against that served schema. Returns the event.
 */
export async function expectServedCloudEvent(
  gatewayUrl: string,
  m: { key: string | null; headers: Record<string, string>; value: unknown },
): Promise<CloudEvent<unknown>> {
  const raw = JSON.stringify(m.value);
  const message: KafkaMessage<string> = { key: m.key ?? '', headers: m.headers, value: raw, body: raw };
  const event = Kafka.toEvent(message) as CloudEvent<unknown>;
  expect(event.validate()).toBe(true);
  expect(event.specversion).toBe('1.0');
  expect(event.datacontenttype).toBe('application/json');
  const dataschema = event.dataschema ?? '';
  expect(dataschema.startsWith(`${TEST_PUBLIC_BASE_URL}/schemas/events/`), dataschema).toBe(true);
  const validate = await servedValidator(gatewayUrl, dataschema);
  expect(validate(structuredClone(event.data)), JSON.stringify(validate.errors)).toBe(true);
  return event;
}

const validators = new Map<string, Promise<ValidateFunction>>();

function servedValidator(gatewayUrl: string, dataschema: string): Promise<ValidateFunction> {
  let v = validators.get(dataschema);
  if (!v) {
    v = (async () => {
      const res = await fetch(`${gatewayUrl}${new URL(dataschema).pathname}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/schema\+json/);
      const schema = (await res.json()) as { $id?: string };
      // The schema is the one the URL names: its $id is that URL.
      expect(schema.$id).toBe(dataschema);
      const ajv = new Ajv({ strict: true, allErrors: true });
      addFormats(ajv);
      return ajv.compile(schema);
    })();
    validators.set(dataschema, v);
  }
  return v;
}
