/** A Kafka failure in our terms: a stable code and whether trying again may help. */
export interface KafkaFailure {
  /**
   * kafka_timeout: not acknowledged in time and never handed to the broker (certainly not appended).
   * kafka_unknown_outcome: handed to the broker, not acknowledged in time: it may still be appended;
   * the error's `outcome` settles when the producer knows.
   */
  code: 'kafka_unavailable' | 'kafka_timeout' | 'kafka_unknown_outcome' | 'message_too_large' | 'topic_missing' | 'kafka_error';
  retriable: boolean;
  message: string;
}

export class KafkaPortError extends Error {
  readonly failure: KafkaFailure;
  /** For kafka_unknown_outcome: resolves if the message was appended after all, rejects if it was not. */
  readonly outcome: Promise<void> | undefined;
  constructor(failure: KafkaFailure, options?: { cause?: unknown; outcome?: Promise<void> }) {
    super(failure.message, options);
    this.name = 'KafkaPortError';
    this.failure = failure;
    this.outcome = options?.outcome;
    this.outcome?.catch(() => {}); // observed by whoever cares; never an unhandled rejection
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
