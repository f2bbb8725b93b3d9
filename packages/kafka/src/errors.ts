/** A Kafka failure in our terms: a stable code and whether trying again may help. */
export interface KafkaFailure {
  code: 'kafka_unavailable' | 'kafka_timeout' | 'message_too_large' | 'topic_missing' | 'kafka_error';
  retriable: boolean;
  message: string;
}

export class KafkaPortError extends Error {
  readonly failure: KafkaFailure;
  constructor(failure: KafkaFailure, options?: { cause?: unknown }) {
    super(failure.message, options);
    this.name = 'KafkaPortError';
    this.failure = failure;
  }
}

export function classifyKafkaError(err: unknown): KafkaFailure {
  if (err instanceof KafkaPortError) return err.failure;
  const e = err as { name?: string; type?: string; message?: string; retriable?: boolean };
  const message = e?.message ?? String(err);
  if (e?.type === 'MESSAGE_TOO_LARGE' || e?.type === 'RECORD_LIST_TOO_LARGE')
    return { code: 'message_too_large', retriable: false, message };
  if (e?.type === 'UNKNOWN_TOPIC_OR_PARTITION') return { code: 'topic_missing', retriable: false, message };
  if (e?.name === 'KafkaJSRequestTimeoutError') return { code: 'kafka_timeout', retriable: true, message };
  if (
    e?.name === 'KafkaJSConnectionError' ||
    e?.name === 'KafkaJSNumberOfRetriesExceeded' ||
    e?.name === 'KafkaJSBrokerNotFound' ||
    e?.name === 'KafkaJSNonRetriableError' ||
    /ECONNREFUSED|Connection|broker/i.test(message)
  )
    return { code: 'kafka_unavailable', retriable: true, message };
  return { code: 'kafka_error', retriable: e?.retriable ?? true, message };
}
