/** kafkajs 2.2.4 calls setTimeout with a negative delay on Node >= 24 (harmless); hide only that warning. */
export function silenceKafkajsTimeoutWarning(): void {
  const flagged = process as NodeJS.Process & { __kafkajsTimeoutWarningSilenced?: boolean };
  if (flagged.__kafkajsTimeoutWarningSilenced) return;
  flagged.__kafkajsTimeoutWarningSilenced = true;
  const original = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    const opt = rest[0];
    const type =
      typeof opt === 'string'
        ? opt
        : ((opt as { type?: string } | undefined)?.type ?? (warning instanceof Error ? warning.name : undefined));
    if (type === 'TimeoutNegativeWarning') return;
    return (original as (...a: unknown[]) => void).call(this, warning, ...rest);
  };
}
